/**
 * A resumable SSE client over `fetch()`: it sends `Authorization` and `Last-Event-ID`, reconnects
 * when the server closes the stream (max lifetime) or the network drops, and never hands the same
 * event id to the caller twice. Stop is an action on the run; closing this stream only detaches.
 * Not `EventSource`: it cannot send `Authorization`, and we send `Last-Event-ID` ourselves.
 */

import { createParser, type EventSourceMessage } from "eventsource-parser";

import { EventIdTracker } from "./eventId";

export type StreamState = "connecting" | "open" | "reconnecting" | "done" | "failed" | "closed";

export class StreamError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly fatal: boolean,
    /** The server's `Retry-After` (429 too many open streams, 503), in milliseconds. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = "StreamError";
  }
}

export interface EventStreamOptions<E> {
  /** The events URL (absolute or same-origin relative). */
  url: string;
  /** The bearer token; called before every connection so a refreshed token is used. */
  getToken: () => Promise<string | null> | string | null;
  /** Resume after this id (sent as `Last-Event-ID`). */
  lastEventId?: string | null;
  /** Called once per new event, in order, after its id was recorded. */
  onEvent: (event: E, id: string | null) => void;
  onState?: (state: StreamState, error?: StreamError) => void;
  /** True for the event after which the stream is complete (no reconnect). */
  isTerminal?: (event: E) => boolean;
  /** Asked when the server closed without a terminal event: true means the run is over anyway. */
  isFinished?: () => Promise<boolean>;
  /** Called when an event's data is not JSON; the event is skipped. */
  onMalformed?: (data: string, id: string | null) => void;
  fetch?: typeof fetch;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** First reconnect delay after a failure; doubled per consecutive failure up to `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Consecutive failed connections before giving up (`failed`). */
  maxFailures?: number;
}

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

const FATAL_STATUSES = new Set([400, 403, 404, 410]);
/** A `Retry-After` longer than this is not waited out in one go (the loop asks again). */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

function retryAfterMs(response: Response): number | null {
  const value = response.headers.get("Retry-After");
  if (!value || !/^\d+$/.test(value.trim())) return null;
  return Math.min(Number(value.trim()) * 1000, MAX_RETRY_AFTER_MS);
}

export class EventStream<E = unknown> {
  private readonly ids: EventIdTracker;
  private readonly controller = new AbortController();
  private retryMs: number | null = null;
  private finished = false;
  private running: Promise<void> | null = null;
  state: StreamState = "connecting";

  constructor(private readonly options: EventStreamOptions<E>) {
    this.ids = new EventIdTracker(options.lastEventId ?? null);
  }

  /** The id of the last event handed to `onEvent` (persist it to resume after a reload). */
  get lastEventId(): string | null {
    return this.ids.last;
  }

  /** Connect and keep the stream going; resolves when it is done, failed or closed. */
  start(): Promise<void> {
    this.running ??= this.loop();
    return this.running;
  }

  /** Detach from the stream (does not cancel the run). */
  close(): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort();
    this.setState("closed");
  }

  private setState(state: StreamState, error?: StreamError): void {
    if (this.state === "closed") return;
    this.state = state;
    this.options.onState?.(state, error);
  }

  private async loop(): Promise<void> {
    const signal = this.controller.signal;
    const sleep = this.options.sleep ?? defaultSleep;
    const initial = this.options.initialDelayMs ?? 500;
    const maxDelay = this.options.maxDelayMs ?? 15_000;
    const maxFailures = this.options.maxFailures ?? 8;
    let failures = 0;
    let retriedAuth = false;
    let first = true;
    while (!signal.aborted && !this.finished) {
      this.setState(first ? "connecting" : "reconnecting");
      first = false;
      let progressed = false;
      let serverWait: number | null = null;
      try {
        progressed = await this.connect(signal);
        retriedAuth = false;
      } catch (err) {
        if (signal.aborted) return;
        const error = err instanceof StreamError ? err : new StreamError(String(err), null, false);
        serverWait = error.retryAfterMs;
        if (error.status === 401 && !retriedAuth) {
          retriedAuth = true; // the token may have been refreshed meanwhile: one more try
        } else if (error.fatal || ++failures >= maxFailures) {
          this.setState("failed", error);
          return;
        }
      }
      if (signal.aborted || this.finished) break;
      if (progressed) failures = 0;
      else if (failures === 0) failures = 1; // a stream that closed without a byte backs off too
      // The stream ended without a terminal event: the relay's max lifetime, or a run that is over.
      if (this.options.isFinished) {
        try {
          if (await this.options.isFinished()) {
            this.finished = true;
            break;
          }
        } catch {
          // unknown: reconnect and let the stream tell
        }
      }
      const backoff = progressed ? (this.retryMs ?? 250) : Math.min(maxDelay, initial * 2 ** (failures - 1));
      // Too many streams open (429): asking again before the server's Retry-After only gets another 429.
      await sleep(Math.max(backoff, serverWait ?? 0), signal);
    }
    if (!signal.aborted) this.setState("done");
  }

  /** One connection. Returns true when it delivered any bytes; throws StreamError when it could not open. */
  private async connect(signal: AbortSignal): Promise<boolean> {
    const token = await this.options.getToken();
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (this.ids.last) headers["Last-Event-ID"] = this.ids.last;
    const doFetch = this.options.fetch ?? globalThis.fetch.bind(globalThis);
    let response: Response;
    try {
      response = await doFetch(this.options.url, { headers, signal, cache: "no-store" });
    } catch (err) {
      throw new StreamError(`could not connect: ${String(err)}`, null, false);
    }
    if (!response.ok) {
      const message = await errorMessage(response);
      throw new StreamError(message, response.status, FATAL_STATUSES.has(response.status), retryAfterMs(response));
    }
    if (!response.body) throw new StreamError("the stream has no body", response.status, true);
    this.setState("open");
    // TextDecoderStream drops a leading byte order mark; the parser handles lines cut across chunks.
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const parsed: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (message) => parsed.push(message), onRetry: (ms) => (this.retryMs = ms) });
    let progressed = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (value.length > 0) progressed = true;
        parser.feed(value);
        for (const message of parsed.splice(0)) {
          if (signal.aborted) return progressed;
          const id = message.id ?? null;
          if (!this.ids.accept(id)) continue; // a replay of something already applied
          if (!message.data) continue;
          let event: E;
          try {
            event = JSON.parse(message.data) as E;
          } catch {
            this.options.onMalformed?.(message.data, id);
            continue;
          }
          this.options.onEvent(event, id);
          if (this.options.isTerminal?.(event)) {
            this.finished = true;
            await reader.cancel().catch(() => undefined);
            return progressed;
          }
        }
      }
    } catch {
      // A dropped connection mid-stream: the loop reconnects from the last applied id.
      return progressed;
    } finally {
      reader.releaseLock();
    }
    return progressed;
  }
}

async function errorMessage(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { message?: string };
    if (body && typeof body.message === "string") return body.message;
  } catch {
    // not JSON
  }
  return `the stream answered ${response.status}`;
}
