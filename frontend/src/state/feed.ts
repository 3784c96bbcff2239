/** The per-user feed: runs that started or finished anywhere (another tab, a webhook, a schedule), and the other
 * announcements of `FeedCustomEvent` (generated from the server's models). */

import { getToken, resolveUrl, streamBase } from "../api/http";
import type { FeedCustomEvent, FeedEventValue } from "../stream/customEvents";
import { EventStream } from "../stream/eventStream";

/** A run of one of the user's chats started or finished. */
export type FeedEvent = Extract<FeedCustomEvent, { name: "run_started" | "run_finished" }>;
type Listener = (event: FeedEvent) => void;

const listeners = new Set<Listener>();
const reconnectListeners = new Set<() => void>();
const documentListeners = new Set<(value: FeedEventValue<"document_status">) => void>();
const inboxListeners = new Set<() => void>();
let stream: EventStream<FeedCustomEvent | { type?: undefined }> | null = null;

export function startFeed(): void {
  if (stream) return;
  let opened = 0;
  stream = new EventStream({
    url: resolveUrl("/api/v1/feed", streamBase),
    getToken,
    maxFailures: 1_000_000, // the feed is best effort and keeps trying (with backoff) while signed in
    maxDelayMs: 30_000,
    onState(state) {
      // Announcements made while the feed was down are not replayed on a fresh start: let views re-check.
      if (state === "open" && ++opened > 1) for (const listener of reconnectListeners) listener();
    },
    onEvent(event) {
      if (event.type !== "CUSTOM") return;
      if (event.name === "document_status") {
        for (const listener of documentListeners) listener(event.value);
      } else if (event.name === "run_started" || event.name === "run_finished") {
        for (const listener of listeners) listener(event);
      } else if (event.name === "approval_requested" || event.name === "question_asked") {
        for (const listener of inboxListeners) listener();
      }
    },
  });
  void stream.start();
}

export function stopFeed(): void {
  stream?.close();
  stream = null;
}

export function onFeedReconnect(listener: () => void): () => void {
  reconnectListeners.add(listener);
  return () => reconnectListeners.delete(listener);
}

export function onFeed(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Something now waits for the user (a run asked a question or for an approval): the inbox and its count reload. */
export function onInboxChange(listener: () => void): () => void {
  inboxListeners.add(listener);
  return () => inboxListeners.delete(listener);
}

/** A knowledge document's status changed (the page that lists documents follows uploads with it). */
export function onDocumentStatus(listener: (value: FeedEventValue<"document_status">) => void): () => void {
  documentListeners.add(listener);
  return () => documentListeners.delete(listener);
}
