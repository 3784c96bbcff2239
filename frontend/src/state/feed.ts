/** The per-user feed: runs that started or finished anywhere (another tab, a webhook, a schedule). */

import { getToken, resolveUrl, streamBase } from "../api/http";
import { EventStream } from "../stream/eventStream";

export interface FeedRun {
  run_id: string;
  chat_id: string | null;
  status?: string | null;
  source?: string | null;
}

export interface FeedEvent {
  name: "run_started" | "run_finished" | string;
  run: FeedRun;
}

type Listener = (event: FeedEvent) => void;

const listeners = new Set<Listener>();
const reconnectListeners = new Set<() => void>();
/** `document_status` announcements (knowledge/status_feed.py): their value as sent. */
const documentListeners = new Set<(value: unknown) => void>();
let stream: EventStream<{ type?: string; name?: string; value?: unknown }> | null = null;

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
      if (event.type !== "CUSTOM" || typeof event.name !== "string") return;
      if (event.name === "document_status") {
        for (const listener of documentListeners) listener(event.value);
        return;
      }
      const value = event.value as FeedRun | undefined;
      if (!value || typeof value.run_id !== "string") return;
      for (const listener of listeners) listener({ name: event.name, run: value });
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

/** A knowledge document's status changed (the page that lists documents follows uploads with it). */
export function onDocumentStatus(listener: (value: unknown) => void): () => void {
  documentListeners.add(listener);
  return () => documentListeners.delete(listener);
}
