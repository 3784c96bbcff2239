/**
 * AG-UI events as `@ag-ui/core` types them (types and the `EventType` enum only: its zod schemas are not imported,
 * so nothing here builds code at run time under the strict CSP). Our own CUSTOM events are typed in `customEvents.ts`.
 */

import { type Event, EventType } from "@ag-ui/core";

export { contentToText, EventType } from "@ag-ui/core";

/** An event as it arrives: parsed JSON, not validated, so a type the web chat does not know falls through. */
export type AguiEvent = Event;

/**
 * The event after which the relay closes a run's stream for good (the relay's own rule): RUN_ERROR,
 * RUN_FINISHED unless its outcome is an interrupt, and `resume_expired` (the events are gone; the
 * transcript is reloaded from the API instead).
 */
export function isTerminalEvent(event: AguiEvent): boolean {
  if (event.type === EventType.RUN_ERROR) return true;
  if (event.type === EventType.RUN_FINISHED) return event.outcome?.type !== "interrupt";
  return event.type === EventType.CUSTOM && event.name === "resume_expired";
}
