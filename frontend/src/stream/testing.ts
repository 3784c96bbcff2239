/** A fake SSE relay for unit tests: a run's events with Redis-style ids, served the way the relay does. */

export interface FakeEvent {
  id: string;
  data: unknown;
}

export interface FakeRequest {
  url: string;
  lastEventId: string | null;
  authorization: string | null;
}

export interface FakeRelayOptions {
  /** Events sent per connection before the relay closes it (its max lifetime); Infinity = all. */
  perConnection?: number;
  /** Split the body into chunks of this many characters, to cut lines and events in half. */
  chunkSize?: number;
  /** Ignore Last-Event-ID and replay from the start (a misbehaving relay: the client must dedupe). */
  ignoreLastEventId?: boolean;
  /** Answer these HTTP statuses for the first connections, in order. */
  failFirst?: number[];
  /** Send `Retry-After: <seconds>` with those failures. */
  retryAfter?: number;
  /** Send heartbeats before the events. */
  heartbeat?: boolean;
  /** Send a `retry:` hint (milliseconds) before the events. */
  retryHint?: number;
  /** End lines with "\r\n" and start the body with a byte order mark, as some proxies do. */
  crlfWithBom?: boolean;
}

export function eventId(n: number, seq = 0): string {
  return `${1712345678000 + n}-${seq}`;
}

export class FakeRelay {
  readonly requests: FakeRequest[] = [];
  private failures: number[];

  constructor(
    public events: FakeEvent[],
    private readonly options: FakeRelayOptions = {},
  ) {
    this.failures = [...(options.failFirst ?? [])];
  }

  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    const request: FakeRequest = {
      url: String(input),
      lastEventId: headers.get("Last-Event-ID"),
      authorization: headers.get("Authorization"),
    };
    this.requests.push(request);
    const failure = this.failures.shift();
    if (failure !== undefined) {
      if (failure === 0) throw new TypeError("network error");
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (this.options.retryAfter !== undefined) headers["Retry-After"] = String(this.options.retryAfter);
      return new Response(JSON.stringify({ code: "x", message: `failed with ${failure}`, request_id: "r" }), {
        status: failure,
        headers,
      });
    }
    let start = 0;
    if (request.lastEventId && !this.options.ignoreLastEventId) {
      const at = this.events.findIndex((e) => e.id === request.lastEventId);
      start = at + 1;
    }
    const slice = this.events.slice(start, start + (this.options.perConnection ?? Infinity));
    let body = this.options.heartbeat ? ": ping\n\n" : "";
    if (this.options.retryHint !== undefined) body += `retry: ${this.options.retryHint}\n\n`;
    for (const e of slice) body += `${e.id ? `id: ${e.id}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`;
    if (this.options.crlfWithBom) body = `\ufeff${body.replaceAll("\n", "\r\n")}`;
    const size = this.options.chunkSize ?? body.length;
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < body.length; i += Math.max(1, size)) controller.enqueue(encoder.encode(body.slice(i, i + size)));
        controller.close();
      },
    });
    return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

export class MemoryStore {
  readonly data = new Map<string, string>();
  getItem(key: string): string | null {
    return this.data.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.data.set(key, value);
  }
  removeItem(key: string): void {
    this.data.delete(key);
  }
}

export const noSleep = async (): Promise<void> => undefined;

/** A run that says "Hello, world!" in tokens, calls a tool, and finishes. */
export function scriptedRun(): FakeEvent[] {
  const data: unknown[] = [
    { type: "RUN_STARTED", threadId: "c1", runId: "r1" },
    { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
    ...["Hel", "lo", ", ", "wor", "ld", "!"].map((delta) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta })),
    { type: "TEXT_MESSAGE_END", messageId: "m1" },
    { type: "TOOL_CALL_START", toolCallId: "t1", toolCallName: "get_time" },
    { type: "TOOL_CALL_ARGS", toolCallId: "t1", delta: '{"tz":' },
    { type: "TOOL_CALL_ARGS", toolCallId: "t1", delta: '"UTC"}' },
    { type: "TOOL_CALL_END", toolCallId: "t1" },
    { type: "TOOL_CALL_RESULT", toolCallId: "t1", messageId: "m2", content: "12:00" },
    { type: "TEXT_MESSAGE_START", messageId: "m3", role: "assistant" },
    ...["It ", "is ", "noon."].map((delta) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m3", delta })),
    { type: "TEXT_MESSAGE_END", messageId: "m3" },
    { type: "RUN_FINISHED", threadId: "c1", runId: "r1" },
  ];
  return data.map((d, i) => ({ id: eventId(i), data: d }));
}
