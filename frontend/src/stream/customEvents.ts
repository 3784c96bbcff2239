/**
 * Our CUSTOM AG-UI events, typed by name: generated from the server's models (shared/personal_agent/events/custom.py,
 * exported with the OpenAPI document), which check every value before it is published. A run's stream and a user's
 * feed each have their own set (`approval_requested` on the feed is a count, not the approval).
 */

import type { components } from "../api/schema";
import type { AguiEvent } from "./agui";

export type RunCustomEvent = components["schemas"]["RunCustomEvent"];
export type FeedCustomEvent = components["schemas"]["FeedCustomEvent"];
export type RunEventName = RunCustomEvent["name"];
export type FeedEventName = FeedCustomEvent["name"];
/** The value of the run stream's CUSTOM event `N`. */
export type RunEventValue<N extends RunEventName> = Extract<RunCustomEvent, { name: N }>["value"];
/** The value of the feed's CUSTOM event `N`. */
export type FeedEventValue<N extends FeedEventName> = Extract<FeedCustomEvent, { name: N }>["value"];

/** A CUSTOM event of a run's stream as its name types it (events arrive as parsed JSON, typed by the server's models). */
export function runCustomEvent(event: AguiEvent): RunCustomEvent | null {
  return event.type === "CUSTOM" ? (event as unknown as RunCustomEvent) : null;
}
