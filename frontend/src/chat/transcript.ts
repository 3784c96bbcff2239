/**
 * What the chat view shows: the stored transcript (Postgres is the source of truth) with the live
 * run laid over it. While a run is followed live, its stored assistant and tool messages are hidden
 * (the live view has them, and a message must never appear twice); its user message stays.
 *
 * Live and stored items have one shape and one order, so a run looks the same while it goes, when it
 * ends and after a reload: what a tool call caused (its approval, the sub-agent it started) comes right
 * after the call (`attachToCalls`), and how a run ended (an error, a stop) after its last item.
 */

import type { Approval, Message } from "../api/client";
import type { components } from "../api/schema";
import { type ApprovalItem, type ApprovalStatus, type LiveItem, type QuestionItem, type RunView, stoppedNotice, type SubagentItem, type ToolFailure } from "../stream/runView";

/** A file a user turn carried (name, size, type). */
export type Attachment = NonNullable<Message["attachments"]>[number];
type StoredApproval = components["schemas"]["TranscriptApproval"];
type StoredSubagent = components["schemas"]["TranscriptSubagent"];
type StoredQuestion = components["schemas"]["TranscriptQuestion"];
export type StoredRun = components["schemas"]["TranscriptRun"];

/** A decision made on this page (shown at once, before the stored transcript has it). */
export interface Decision {
  status: "approved" | "denied";
  reason: string | null;
}

/** `truncated`: the stored part was too long to send whole and was cut (the API says so). `toolCallId` ties an
 * approval or a sub-agent to the call that caused it (a `question` will hang off its call the same way). */
export type DisplayItem =
  | { kind: "user"; id: string; text: string; pending?: boolean; truncated?: boolean; attachments?: Attachment[] }
  | { kind: "assistant"; id: string; text: string; streaming: boolean; truncated?: boolean }
  | { kind: "tool"; id: string; name: string; args: unknown; result: unknown; done: boolean; failure?: ToolFailure | null; gated?: boolean; truncated?: boolean; runId?: string | null }
  | (Omit<ApprovalItem, "status"> & { status: ApprovalStatus | string })
  | QuestionItem
  | { kind: "error"; id: string; message: string; code: string | null }
  | { kind: "notice"; id: string; text: string }
  | SubagentItem;

type ToolItem = Extract<DisplayItem, { kind: "tool" }>;

function messageText(message: Message): string {
  if (typeof message.text === "string") return message.text;
  if (typeof message.content === "string") return message.content;
  return "";
}

function approvalItem(a: StoredApproval, toolCallId: string | null, childRunId: string | null): DisplayItem {
  const { id, tool, args, status, reason } = a;
  return { kind: "approval", id, tool, args, expiresAt: a.expires_at, status, toolCallId, childRunId, decidedBy: a.decided_by, reason };
}

function questionItem(q: StoredQuestion, toolCallId: string, runId: string): QuestionItem {
  return {
    kind: "question",
    id: q.id,
    runId,
    question: q.question,
    choices: q.choices ?? null,
    schema: (q.schema as Record<string, unknown> | null | undefined) ?? null,
    default: q.default ?? null,
    expiresAt: q.expires_at,
    status: q.status,
    answer: q.answer ?? null,
    toolCallId,
  };
}

function subagentItem(s: StoredSubagent, toolCallId: string): SubagentItem {
  return {
    kind: "subagent",
    id: s.run_id,
    task: s.task,
    preset: s.preset,
    eventsUrl: s.events_url,
    status: s.status,
    answer: null,
    toolCallId,
    error: s.error ?? null,
    costUsd: s.cost_usd,
  };
}

/** How each stored run ended, as the item shown after its last item (nothing for a run that succeeded or goes on). */
function runEnd(run: StoredRun): DisplayItem | null {
  if (run.status === "failed") return { kind: "error", id: `error-${run.id}`, message: run.error?.message ?? "the run failed", code: run.error?.code ?? null };
  if (run.status === "cancelled") return stoppedNotice(run.id);
  return null;
}

/** Stored messages as display items (tool results joined to their calls, approvals and sub-agents after their call,
 * each run's end after its last item). The messages of run `hideRun` (followed live) are left out but its user turn. */
export function storedItems(messages: Message[], hideRun: string | null = null, runs: Map<string, StoredRun> = new Map()): DisplayItem[] {
  const items: DisplayItem[] = [];
  const tools = new Map<string, ToolItem>();
  const lastOfRun = new Map<string, number>();
  const delegated: [SubagentItem, ToolItem][] = [];
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
        const item: ToolItem = { kind: "tool", id: call.id, name: call.name, args: call.args, result: null, done: true, failure: null, truncated, runId: message.run_id };
        tools.set(call.id, item);
        items.push(item);
        if (call.approval) items.push(approvalItem(call.approval, call.id, null));
        if (call.question) items.push(questionItem(call.question, call.id, message.run_id ?? ""));
        if (call.subagent) {
          const subagent = subagentItem(call.subagent, call.id);
          delegated.push([subagent, item]);
          items.push(subagent, ...call.subagent.approvals.map((a) => approvalItem(a, null, subagent.id)));
        }
      }
    } else if (message.role === "tool") {
      const result = message.content ?? message.text ?? null;
      const failure = message.outcome && message.outcome !== "done" ? message.outcome : null;
      const call = message.tool_call_id ? tools.get(message.tool_call_id) : undefined;
      if (call) {
        call.result = result;
        call.failure = failure;
        call.truncated ||= truncated;
      } else items.push({ kind: "tool", id: message.id, name: "tool", args: null, result, done: true, failure, truncated, runId: message.run_id });
    }
    if (message.run_id) lastOfRun.set(message.run_id, items.length);
  }
  // A stored call without a result did not finish (its run stopped or failed first).
  for (const call of tools.values()) if (call.result === null && !call.failure) call.failure = "interrupted";
  // A sub-agent's answer is its `delegate` call's result.
  for (const [subagent, call] of delegated) if (subagent.status === "succeeded" && typeof call.result === "string") subagent.answer = call.result;
  // Each run's end after its last item, from the last run back so the positions stay right.
  const ends = [...lastOfRun].filter(([runId]) => runId !== hideRun).sort((a, b) => b[1] - a[1]);
  for (const [runId, at] of ends) {
    const run = runs.get(runId);
    const end = run ? runEnd(run) : null;
    if (end) items.splice(at, 0, end);
  }
  return items;
}

/** What a tool call caused (its approval, its sub-agent, a sub-agent's own approvals) right after the call, in the
 * order they came; whatever has no call in view stays where it is. Live and stored items go through this alike. */
export function attachToCalls(items: DisplayItem[]): DisplayItem[] {
  const calls = new Set(items.filter((i) => i.kind === "tool").map((i) => i.id));
  const subagents = new Set(items.filter((i) => i.kind === "subagent").map((i) => i.id));
  const attached = new Map<string, DisplayItem[]>();
  const anchorOf = (item: DisplayItem): string | null => {
    if (item.kind === "approval" && item.childRunId && subagents.has(item.childRunId)) return `subagent:${item.childRunId}`;
    if ((item.kind === "approval" && !item.childRunId) || item.kind === "subagent" || item.kind === "question")
      return item.toolCallId && calls.has(item.toolCallId) ? `tool:${item.toolCallId}` : null;
    return null;
  };
  const rest: DisplayItem[] = [];
  for (const item of items) {
    const anchor = anchorOf(item);
    if (anchor) attached.set(anchor, [...(attached.get(anchor) ?? []), item]);
    else rest.push(item);
  }
  const out: DisplayItem[] = [];
  const place = (item: DisplayItem) => {
    const after = attached.get(`${item.kind}:${item.id}`) ?? [];
    // A call whose approval is still pending is held by it ("gated").
    const gated = item.kind === "tool" && after.some((a) => (a.kind === "approval" || a.kind === "question") && a.status === "pending");
    out.push(gated ? { ...item, gated } : item);
    for (const next of after) place(next);
  };
  rest.forEach(place);
  return out;
}

export interface TranscriptInput {
  messages: Message[];
  /** How each stored run ended, by id. */
  runs?: Map<string, StoredRun>;
  live: RunView | null;
  /** What stays shown of runs that ended while we watched and the stored transcript does not have. */
  notices: Map<string, LiveItem[]>;
  /** Pending approvals of this chat from the API (shown when the live view does not have them). */
  approvals: Approval[];
  /** Decisions taken in this page, so a card shows its outcome at once. */
  decided: Map<string, Decision>;
  /** The message being sent (before the run exists). */
  sending: string | null;
}

/** A decision made on this page, shown on a card that does not have it yet ("you" decided it). */
function withDecision(item: ApprovalItem, decided: Map<string, Decision>): ApprovalItem {
  const mine = decided.get(item.id);
  if (!mine || (item.status !== "pending" && item.status !== "decided")) return { ...item };
  return { ...item, status: mine.status, decidedBy: item.decidedBy ?? "you", reason: item.reason ?? mine.reason };
}

function fromLive(item: LiveItem, decided: Map<string, Decision>, runId: string): DisplayItem {
  // A view saved before these fields existed (sessionStorage) reads as null.
  if (item.kind === "approval")
    return withDecision({ ...item, toolCallId: item.toolCallId ?? null, childRunId: item.childRunId ?? null, decidedBy: item.decidedBy ?? null, reason: item.reason ?? null }, decided);
  if (item.kind === "tool") return { kind: "tool", id: item.id, name: item.name, args: item.args, result: item.result, done: item.done, failure: item.failure ?? null, runId };
  if (item.kind === "subagent") return { ...item, toolCallId: item.toolCallId ?? null, error: item.error ?? null, costUsd: item.costUsd ?? null };
  return { ...item };
}

export function buildTranscript(input: TranscriptInput): DisplayItem[] {
  const live = input.live;
  const items: DisplayItem[] = [];
  // Stored messages, then what ended while we watched and is not stored.
  const stored = storedItems(input.messages, live?.runId ?? null, input.runs);
  items.push(...stored.map((i) => (i.kind === "approval" ? withDecision(i as ApprovalItem, input.decided) : i)));
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
    const pending: ApprovalItem = {
      kind: "approval",
      id: approval.id,
      tool: approval.tool,
      args: approval.args,
      expiresAt: approval.expires_at ?? null,
      status: approval.status as ApprovalStatus,
      toolCallId: null,
      childRunId: null,
      decidedBy: null,
      reason: null,
    };
    items.push(withDecision(pending, input.decided));
  }
  return attachToCalls(items);
}

const TERMINAL = new Set(["succeeded", "skipped", "success", "finished", "completed", "complete", "failed", "error", "errored", "cancelled", "canceled", "expired", "timed_out", "denied"]);

/** True while a run's status means it may still produce events. */
export function isActiveStatus(status: string | null | undefined): boolean {
  return !!status && !TERMINAL.has(status.toLowerCase());
}
