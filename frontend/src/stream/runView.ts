/**
 * The live view of one run, built from its AG-UI events. It is plain data (so it can be saved in
 * sessionStorage with the last applied event id and restored after a reload) and is mutated in
 * place (so a Vue `reactive()` proxy around it re-renders as tokens arrive).
 */

import { type AguiEvent, contentToText, EventType } from "./agui";
import { type RunCustomEvent, runCustomEvent, type RunEventValue } from "./customEvents";

/** "decided": the run went on after it, but this page did not see which way (decided elsewhere). */
export type ApprovalStatus = "pending" | "approved" | "denied" | "expired" | "decided";

/** How a tool call that did not succeed ended (the TOOL_CALL_RESULT's `metadata.outcome`; null: it succeeded). */
export type ToolFailure = "failed" | "denied" | "interrupted";

/** A person's decision on a tool call (`toolCallId`; `childRunId`: a call of that sub-agent). `decidedBy` and
 * `reason` are known once the stored transcript has them, or when the decision was made on this page. */
export interface ApprovalItem {
  kind: "approval";
  id: string;
  tool: string;
  args: unknown;
  expiresAt: string | null;
  status: ApprovalStatus;
  toolCallId: string | null;
  childRunId: string | null;
  decidedBy: string | null;
  reason: string | null;
}

/** An `ask_user` question of the run (its `toolCallId`): the form the answer fits (`choices`, a JSON `schema`, or
 * free text), and once answered the answer the run went on with. */
export interface QuestionItem {
  kind: "question";
  id: string;
  runId: string;
  question: string;
  choices: string[] | null;
  schema: Record<string, unknown> | null;
  default: unknown;
  expiresAt: string | null;
  status: "pending" | "answered" | "expired";
  answer: unknown;
  toolCallId: string | null;
}

export type LiveItem =
  | { kind: "assistant"; id: string; text: string; streaming: boolean }
  | { kind: "tool"; id: string; name: string; args: string; result: string | null; done: boolean; failure: ToolFailure | null }
  | ApprovalItem
  | QuestionItem
  | { kind: "error"; id: string; message: string; code: string | null }
  | { kind: "notice"; id: string; text: string }
  | SubagentItem;

/** A sub-agent (a child run) the run started with its `delegate` call `toolCallId`: its card follows the child's
 * own stream (`eventsUrl`) while it works. `costUsd` is known once the stored transcript has it. */
export interface SubagentItem {
  kind: "subagent";
  id: string;
  task: string;
  preset: string | null;
  eventsUrl: string;
  status: string;
  answer: string | null;
  toolCallId: string | null;
  error: { code: string; message: string } | null;
  costUsd: number | null;
}

export type RunPhase = "running" | "finished" | "error" | "cancelled" | "expired";

export interface RunView {
  runId: string;
  chatId: string;
  eventsUrl: string;
  mode: string | null;
  model: string | null;
  phase: RunPhase;
  /** The user's message as sent, shown until the stored transcript has it. */
  userText: string | null;
  items: LiveItem[];
  /** The id of the last event applied to `items` (resume point). */
  lastEventId: string | null;
}

export function newRunView(init: {
  runId: string;
  chatId: string;
  eventsUrl: string;
  mode?: string | null;
  model?: string | null;
  userText?: string | null;
}): RunView {
  return {
    runId: init.runId,
    chatId: init.chatId,
    eventsUrl: init.eventsUrl,
    mode: init.mode ?? null,
    model: init.model ?? null,
    phase: "running",
    userText: init.userText ?? null,
    items: [],
    lastEventId: null,
  };
}

function find<K extends LiveItem["kind"]>(view: RunView, kind: K, id: string): Extract<LiveItem, { kind: K }> | undefined {
  return view.items.find((item) => item.kind === kind && item.id === id) as Extract<LiveItem, { kind: K }> | undefined;
}

function assistant(view: RunView, messageId: string): Extract<LiveItem, { kind: "assistant" }> {
  let item = find(view, "assistant", messageId);
  if (!item) {
    item = { kind: "assistant", id: messageId, text: "", streaming: true };
    view.items.push(item);
  }
  return item;
}

function tool(view: RunView, toolCallId: string, name = "tool"): Extract<LiveItem, { kind: "tool" }> {
  let item = find(view, "tool", toolCallId);
  if (!item) {
    item = { kind: "tool", id: toolCallId, name, args: "", result: null, done: false, failure: null };
    view.items.push(item);
  }
  return item;
}

function lastId(view: RunView, kind: "assistant" | "tool"): string {
  for (let i = view.items.length - 1; i >= 0; i--) if (view.items[i]!.kind === kind) return view.items[i]!.id;
  return "";
}

/** Apply one event (already de-duplicated by id) to the view. */
export function applyEvent(view: RunView, event: AguiEvent, id: string | null = null): void {
  if (id) view.lastEventId = id;
  switch (event.type) {
    case EventType.RUN_STARTED:
      // A run that starts again after an approval interrupt had its approvals answered (maybe in another tab).
      for (const item of view.items) if (item.kind === "approval" && item.status === "pending") item.status = "decided";
      break;
    case EventType.TEXT_MESSAGE_START: {
      // A message starts again when its model request is sent again (a worker died mid-stream and the run
      // resumed from its last checkpoint): what streamed before is replaced, not repeated.
      const item = assistant(view, event.messageId);
      item.text = "";
      item.streaming = true;
      break;
    }
    case EventType.TEXT_MESSAGE_CONTENT:
      assistant(view, event.messageId).text += event.delta;
      break;
    case EventType.TEXT_MESSAGE_END:
      assistant(view, event.messageId).streaming = false;
      break;
    case EventType.TEXT_MESSAGE_CHUNK: {
      const messageId = event.messageId ?? lastId(view, "assistant");
      if (messageId) assistant(view, messageId).text += event.delta ?? "";
      break;
    }
    case EventType.TOOL_CALL_START: {
      const item = tool(view, event.toolCallId, event.toolCallName);
      Object.assign(item, { name: event.toolCallName, args: "", result: null, done: false, failure: null });
      break;
    }
    case EventType.TOOL_CALL_ARGS:
      tool(view, event.toolCallId).args += event.delta;
      break;
    case EventType.TOOL_CALL_END:
      tool(view, event.toolCallId).done = true;
      break;
    case EventType.TOOL_CALL_CHUNK: {
      const toolCallId = event.toolCallId ?? lastId(view, "tool");
      if (toolCallId) {
        const item = tool(view, toolCallId, event.toolCallName);
        if (event.toolCallName) item.name = event.toolCallName;
        item.args += event.delta ?? "";
      }
      break;
    }
    case EventType.TOOL_CALL_RESULT: {
      const item = tool(view, event.toolCallId);
      item.result = contentToText(event.content);
      item.done = true;
      item.failure = toolFailure(event.metadata);
      break;
    }
    case EventType.RUN_FINISHED:
      endStreaming(view);
      if (event.outcome?.type === "interrupt") break; // paused for approval; the run goes on after it
      if (event.outcome?.type === "cancelled" && view.phase === "running") {
        view.phase = "cancelled";
        view.items.push(stopped(view));
      }
      if (view.phase === "running") view.phase = "finished";
      break;
    case EventType.RUN_ERROR:
      endStreaming(view);
      view.phase = "error";
      // One error per run, with the id the stored transcript gives it (the end of a run shows it in the same place).
      if (!find(view, "error", `error-${view.runId}`)) view.items.push({ kind: "error", id: `error-${view.runId}`, message: event.message, code: event.code ?? null });
      break;
    case EventType.CUSTOM:
      applyCustom(view, runCustomEvent(event)!, id);
      break;
    default:
      break; // steps, state snapshots and anything newer are not shown
  }
}

function applyCustom(view: RunView, event: RunCustomEvent, id: string | null): void {
  switch (event.name) {
    case "approval_requested":
      if (!find(view, "approval", event.value.approval_id)) {
        const { approval_id, tool, args, expires_at, tool_call_id, child_run_id } = event.value;
        view.items.push({
          kind: "approval",
          id: approval_id,
          tool,
          args,
          expiresAt: expires_at,
          status: "pending",
          toolCallId: tool_call_id,
          childRunId: child_run_id ?? null,
          decidedBy: null,
          reason: null,
        });
      }
      break;
    case "question_asked":
      if (!find(view, "question", event.value.question_id)) {
        const v = event.value;
        view.items.push({
          kind: "question",
          id: v.question_id,
          runId: v.run_id,
          question: v.question,
          choices: v.choices ?? null,
          schema: (v.schema as Record<string, unknown> | null | undefined) ?? null,
          default: v.default ?? null,
          expiresAt: v.expires_at,
          status: "pending",
          answer: null,
          toolCallId: v.tool_call_id,
        });
      }
      break;
    case "question_answered": {
      const item = find(view, "question", event.value.question_id);
      if (item) Object.assign(item, { status: event.value.status, answer: event.value.answer ?? null });
      break;
    }
    case "subagent_started":
    case "subagent_finished":
      applySubagent(view, event);
      break;
    case "run_cancelled":
      endStreaming(view);
      view.phase = "cancelled";
      if (!find(view, "notice", `cancelled-${view.runId}`)) view.items.push(stopped(view));
      break;
    case "resume_expired":
      view.phase = "expired";
      break;
    case "history_summarised": {
      // Long chats fit the model: its older turns now reach it as a summary (the transcript marks where it ends).
      const text = "This chat is longer than the model's context: its older turns were summarised for the model.";
      view.items.push({ kind: "notice", id: `summarised-${id ?? view.items.length}`, text });
      break;
    }
    default:
      break; // progress, gated or unreachable tools, resumes: not shown in the live view
  }
}

function applySubagent(
  view: RunView,
  event: { name: "subagent_started"; value: RunEventValue<"subagent_started"> } | { name: "subagent_finished"; value: RunEventValue<"subagent_finished"> },
): void {
  const v = event.value;
  let item = find(view, "subagent", v.child_run_id);
  if (!item) {
    const started = event.name === "subagent_started" ? event.value : null;
    item = {
      kind: "subagent",
      id: v.child_run_id,
      task: started?.task ?? "",
      preset: started?.preset ?? null,
      eventsUrl: v.events_url,
      status: "running",
      answer: null,
      toolCallId: v.tool_call_id,
      error: null,
      costUsd: null,
    };
    view.items.push(item);
  }
  if (event.name === "subagent_finished") {
    item.status = event.value.status;
    item.answer = event.value.answer ?? null;
    const error = event.value.error;
    item.error = error ? { code: error.code, message: error.message } : null;
    item.costUsd = event.value.cost_usd ?? null;
  }
}

/** The words for a run that was stopped, with the id the stored transcript gives it. */
export function stoppedNotice(runId: string): Extract<LiveItem, { kind: "notice" }> {
  return { kind: "notice", id: `cancelled-${runId}`, text: "The run was stopped." };
}

function stopped(view: RunView): Extract<LiveItem, { kind: "notice" }> {
  return stoppedNotice(view.runId);
}

function toolFailure(metadata: unknown): ToolFailure | null {
  const outcome = metadata && typeof metadata === "object" ? (metadata as { outcome?: unknown }).outcome : null;
  return outcome === "failed" || outcome === "denied" || outcome === "interrupted" ? outcome : null;
}

function endStreaming(view: RunView): void {
  for (const item of view.items) if (item.kind === "assistant") item.streaming = false;
}

/** The whole text the run's assistant messages streamed (for tests and the "copy" action). */
export function assistantText(view: RunView): string {
  return view.items
    .filter((item): item is Extract<LiveItem, { kind: "assistant" }> => item.kind === "assistant")
    .map((item) => item.text)
    .join("\n\n");
}
