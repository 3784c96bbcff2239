/** The AG-UI events the web chat understands (a subset of the protocol; unknown types are ignored). */

interface Base {
  timestamp?: number;
  rawEvent?: unknown;
}

export type AguiEvent =
  | (Base & { type: "RUN_STARTED"; threadId?: string; runId?: string })
  | (Base & { type: "RUN_FINISHED"; threadId?: string; runId?: string; result?: unknown; outcome?: RunOutcome })
  | (Base & { type: "RUN_ERROR"; message: string; code?: string | null })
  | (Base & { type: "STEP_STARTED" | "STEP_FINISHED"; stepName?: string })
  | (Base & { type: "TEXT_MESSAGE_START"; messageId: string; role?: string })
  | (Base & { type: "TEXT_MESSAGE_CONTENT"; messageId: string; delta: string })
  | (Base & { type: "TEXT_MESSAGE_END"; messageId: string })
  | (Base & { type: "TEXT_MESSAGE_CHUNK"; messageId?: string; role?: string; delta?: string })
  | (Base & { type: "TOOL_CALL_START"; toolCallId: string; toolCallName: string; parentMessageId?: string })
  | (Base & { type: "TOOL_CALL_ARGS"; toolCallId: string; delta: string })
  | (Base & { type: "TOOL_CALL_END"; toolCallId: string })
  | (Base & { type: "TOOL_CALL_CHUNK"; toolCallId?: string; toolCallName?: string; delta?: string })
  | (Base & { type: "TOOL_CALL_RESULT"; toolCallId: string; messageId?: string; content: string; role?: string })
  | (Base & { type: "CUSTOM"; name: string; value?: unknown })
  | (Base & { type: "OTHER"; [key: string]: unknown });

/** How a run ended: an `interrupt` (waiting for a person) is not the end, the run goes on after it. */
export interface RunOutcome {
  type?: "success" | "interrupt" | "cancelled" | string;
  interrupts?: { id: string; reason?: string; tool_call_id?: string; message?: string; expires_at?: string }[];
}

/**
 * The event after which the relay closes a run's stream for good (the relay's own rule): RUN_ERROR,
 * RUN_FINISHED unless its outcome is an interrupt, and `resume_expired` (the events are gone; the
 * transcript is reloaded from the API instead).
 */
export function isTerminalEvent(event: AguiEvent): boolean {
  if (event.type === "RUN_ERROR") return true;
  if (event.type === "RUN_FINISHED") return event.outcome?.type !== "interrupt";
  return event.type === "CUSTOM" && event.name === "resume_expired";
}

export interface ApprovalRequest {
  approval_id: string;
  tool: string;
  args: unknown;
  expires_at?: string | null;
}

export function isApprovalRequest(value: unknown): value is ApprovalRequest {
  return typeof value === "object" && value !== null && typeof (value as { approval_id?: unknown }).approval_id === "string";
}
