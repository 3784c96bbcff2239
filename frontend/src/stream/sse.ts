/**
 * A parser for `text/event-stream` (the WHATWG "server-sent events" format), fed text chunks as they
 * arrive from `fetch()`. We parse the stream ourselves instead of using `EventSource` because
 * EventSource cannot send an `Authorization` header, and we want to send `Last-Event-ID` ourselves.
 */

export interface SseMessage {
  /** The `id:` of this event, or null when the event carried none. */
  id: string | null;
  /** The `event:` name; "message" when absent. */
  event: string;
  /** The `data:` lines joined by "\n". */
  data: string;
  /** A `retry:` hint (milliseconds) sent with this event, if any. */
  retry: number | null;
}

export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private eventName = "";
  private id: string | null = null;
  private retry: number | null = null;
  private sawField = false;
  private first = true;
  /** A chunk ended on "\r": a "\n" starting the next chunk belongs to the same line ending. */
  private pendingCr = false;

  /** Feed a decoded chunk; returns every event completed by it. */
  feed(chunk: string): SseMessage[] {
    if (this.first && chunk.length > 0) {
      this.first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.pendingCr && chunk.startsWith("\n")) chunk = chunk.slice(1);
    this.pendingCr = false;
    this.buffer += chunk;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== "\n" && c !== "\r") continue;
      const line = this.buffer.slice(start, i);
      if (c === "\r") {
        if (i + 1 < this.buffer.length) {
          if (this.buffer[i + 1] === "\n") i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
      const message = this.line(line);
      if (message) out.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null; // a comment, e.g. the `: ping` heartbeat
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        this.sawField = true;
        break;
      case "event":
        this.eventName = value;
        this.sawField = true;
        break;
      case "id":
        if (!value.includes("\0")) {
          this.id = value;
          this.sawField = true;
        }
        break;
      case "retry":
        if (/^\d+$/.test(value)) {
          this.retry = Number(value);
          this.sawField = true;
        }
        break;
      default:
        break; // unknown fields are ignored, as the spec says
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    if (!this.sawField) return null;
    const message: SseMessage = {
      id: this.id,
      event: this.eventName || "message",
      data: this.data.join("\n"),
      retry: this.retry,
    };
    this.data = [];
    this.eventName = "";
    this.id = null;
    this.retry = null;
    this.sawField = false;
    return message;
  }
}
