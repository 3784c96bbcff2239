/** The AG-UI events the web chat understands (a subset of the protocol; unknown types are ignored). */

interface Base {
  timestamp?: number;
  rawEvent?: unknown;
}

export type AguiEvent =
  | (Base & { type: "RUN_STARTED"; threadId?: string; runId?: string })
  | (Base & { type: "RUN_FINISHED"; threadId?: string; runId?: string; result?: unknown })
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

/** The event after which a run's stream is complete. */
export function isTerminalEvent(event: AguiEvent): boolean {
  if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") return true;
  return event.type === "CUSTOM" && event.name === "run_cancelled";
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
