/**
 * Following a run across reloads. The live view and the id of the last event applied to it are
 * saved together in sessionStorage after every event, so a reload restores exactly what was shown
 * and resumes the stream after that id (`Last-Event-ID`): nothing is shown twice, nothing is lost.
 */

import { type AguiEvent, isTerminalEvent } from "./agui";
import { EventStream, type StreamError, type StreamState } from "./eventStream";
import { applyEvent, type RunView } from "./runView";

export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

const PREFIX = "pa.run.";

export function saveRun(store: KeyValueStore, view: RunView): void {
  try {
    store.setItem(PREFIX + view.chatId, JSON.stringify(view));
  } catch {
    // storage full or disabled: resuming falls back to replaying the run from its start
  }
}

export function loadRun(store: KeyValueStore, chatId: string): RunView | null {
  const raw = store.getItem(PREFIX + chatId);
  if (!raw) return null;
  try {
    const view = JSON.parse(raw) as RunView;
    if (view && typeof view.runId === "string" && Array.isArray(view.items)) return view;
  } catch {
    // corrupt entry: ignore it
  }
  store.removeItem(PREFIX + chatId);
  return null;
}

export function clearRun(store: KeyValueStore, chatId: string): void {
  store.removeItem(PREFIX + chatId);
}

export interface FollowOptions {
  getToken: () => Promise<string | null> | string | null;
  store?: KeyValueStore | null;
  fetch?: typeof fetch;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Asked when the relay closed the stream without a terminal event. */
  isFinished?: () => Promise<boolean>;
  onEvent?: (event: AguiEvent, view: RunView) => void;
  onState?: (state: StreamState, error?: StreamError) => void;
}

export interface Following {
  stream: EventStream<AguiEvent>;
  /** Resolves when the run's stream is complete, failed or detached. */
  done: Promise<void>;
  stop(): void;
}

/** Stream `view`'s run into `view`, resuming after `view.lastEventId`. */
export function followRun(view: RunView, options: FollowOptions): Following {
  const store = options.store ?? null;
  const stream = new EventStream<AguiEvent>({
    url: view.eventsUrl,
    getToken: options.getToken,
    lastEventId: view.lastEventId,
    fetch: options.fetch,
    sleep: options.sleep,
    isTerminal: isTerminalEvent,
    isFinished: options.isFinished,
    onState: options.onState,
    onEvent(event, id) {
      applyEvent(view, event, id);
      if (store) saveRun(store, view);
      options.onEvent?.(event, view);
    },
  });
  return { stream, done: stream.start(), stop: () => stream.close() };
}
