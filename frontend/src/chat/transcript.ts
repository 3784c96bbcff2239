/**
 * What the chat view shows: the stored transcript (Postgres is the source of truth) with the live
 * run laid over it. While a run is followed live, its stored assistant and tool messages are hidden
 * (the live view has them, and a message must never appear twice); its user message stays.
 */

import type { Approval, Message } from "../api/client";
import type { ApprovalStatus, LiveItem, RunView, SubagentItem } from "../stream/runView";

/** A file a user turn carried (name, size, type). */
export type Attachment = NonNullable<Message["attachments"]>[number];

/** `truncated`: the stored part was too long to send whole and was cut (the API says so). */
export type DisplayItem =
  | { kind: "user"; id: string; text: string; pending?: boolean; truncated?: boolean; attachments?: Attachment[] }
  | { kind: "assistant"; id: string; text: string; streaming: boolean; truncated?: boolean }
  | { kind: "tool"; id: string; name: string; args: unknown; result: unknown; done: boolean; truncated?: boolean; runId?: string | null }
  | { kind: "approval"; id: string; tool: string; args: unknown; expiresAt: string | null; status: ApprovalStatus | string }
  | { kind: "error"; id: string; message: string; code: string | null }
  | { kind: "notice"; id: string; text: string }
  | SubagentItem;

function messageText(message: Message): string {
  if (typeof message.text === "string") return message.text;
  if (typeof message.content === "string") return message.content;
  return "";
}

/** Stored messages as display items (tool results joined to their calls). */
export function storedItems(messages: Message[], hideRun: string | null = null): DisplayItem[] {
  const items: DisplayItem[] = [];
  const tools = new Map<string, Extract<DisplayItem, { kind: "tool" }>>();
  for (const message of messages) {
    const hidden = hideRun !== null && message.run_id === hideRun;
    const truncated = message.truncated === true;
    if (message.role === "user") {
      const attachments = message.attachments?.length ? { attachments: message.attachments } : {};
      items.push({ kind: "user", id: message.id, text: messageText(message), truncated, ...attachments });
    } else if (hidden) {
      continue;
    } else if (message.role === "assistant") {
      const text = messageText(message);
      if (text) items.push({ kind: "assistant", id: message.id, text, streaming: false, truncated });
      for (const call of message.tool_calls ?? []) {
        const item = { kind: "tool" as const, id: call.id, name: call.name, args: call.args, result: null as unknown, done: true, truncated, runId: message.run_id };
        tools.set(call.id, item);
        items.push(item);
      }
    } else if (message.role === "tool") {
      const result = message.content ?? message.text ?? null;
      const call = message.tool_call_id ? tools.get(message.tool_call_id) : undefined;
      if (call) {
        call.result = result;
        call.truncated ||= truncated;
      } else items.push({ kind: "tool", id: message.id, name: "tool", args: null, result, done: true, truncated, runId: message.run_id });
    }
  }
  return items;
}

export interface TranscriptInput {
  messages: Message[];
  live: RunView | null;
  /** Errors and notices of runs that ended while we watched (they are not stored as messages). */
  notices: Map<string, LiveItem[]>;
  /** Pending approvals of this chat from the API (shown when the live view does not have them). */
  approvals: Approval[];
  /** Decisions taken in this page, so a card shows its outcome at once. */
  decided: Map<string, ApprovalStatus>;
  /** The message being sent (before the run exists). */
  sending: string | null;
}

function fromLive(item: LiveItem, decided: Map<string, ApprovalStatus>, runId: string): DisplayItem {
  if (item.kind === "approval") return { ...item, status: decided.get(item.id) ?? item.status };
  if (item.kind === "tool") return { kind: "tool", id: item.id, name: item.name, args: item.args, result: item.result, done: item.done, runId };
  return { ...item };
}

export function buildTranscript(input: TranscriptInput): DisplayItem[] {
  const live = input.live;
  const items: DisplayItem[] = [];
  // Stored messages, then what ended while we watched (errors and stops are not stored as messages).
  const stored = storedItems(input.messages, live?.runId ?? null);
  items.push(...stored);
  for (const [runId, notices] of input.notices) {
    if (live && runId === live.runId) continue;
    items.push(...notices.map((n) => fromLive(n, input.decided, runId)));
  }
  if (live) {
    const hasUser = input.messages.some((m) => m.role === "user" && m.run_id === live.runId);
    if (!hasUser && live.userText) items.push({ kind: "user", id: `pending-${live.runId}`, text: live.userText, pending: true });
    items.push(...live.items.map((i) => fromLive(i, input.decided, live.runId)));
  }
  if (input.sending !== null) items.push({ kind: "user", id: "sending", text: input.sending, pending: true });
  const shown = new Set(items.filter((i) => i.kind === "approval").map((i) => i.id));
  for (const approval of input.approvals) {
    if (shown.has(approval.id)) continue;
    items.push({
      kind: "approval",
      id: approval.id,
      tool: approval.tool,
      args: approval.args,
      expiresAt: approval.expires_at ?? null,
      status: input.decided.get(approval.id) ?? approval.status,
    });
  }
  return items;
}

const TERMINAL = new Set(["succeeded", "skipped", "success", "finished", "completed", "complete", "failed", "error", "errored", "cancelled", "canceled", "expired", "timed_out", "denied"]);

/** True while a run's status means it may still produce events. */
export function isActiveStatus(status: string | null | undefined): boolean {
  return !!status && !TERMINAL.has(status.toLowerCase());
}
