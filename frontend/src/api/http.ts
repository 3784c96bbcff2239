/** The one HTTP layer: base URL, bearer token, JSON, and errors as `ApiError` ({code, message, request_id}). */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type TokenProvider = () => Promise<string | null>;

let tokenProvider: TokenProvider = async () => null;
let onUnauthorized: (() => void) | null = null;

export const apiBase: string = (import.meta.env.VITE_API_BASE ?? "").replace(/\/$/, "");
export const streamBase: string = (import.meta.env.VITE_STREAM_BASE ?? "").replace(/\/$/, "") || apiBase;

export function setTokenProvider(provider: TokenProvider): void {
  tokenProvider = provider;
}

export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

export function getToken(): Promise<string | null> {
  return tokenProvider();
}

/** An absolute URL for a path the API returned (events_url may be relative or absolute). */
export function resolveUrl(path: string, base = apiBase): string {
  if (/^https?:\/\//.test(path)) return path;
  return base + path;
}

export type Query = Record<string, string | number | boolean | null | undefined>;

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export async function request<T>(
  method: string,
  path: string,
  options: { body?: unknown; query?: Query; auth?: boolean; signal?: AbortSignal } = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (options.auth !== false) {
    const token = await tokenProvider();
    if (token) headers.Authorization = `Bearer ${token}`;
  }
  let response: Response;
  try {
    response = await fetch(resolveUrl(withQuery(path, options.query)), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, "network_error", "The server could not be reached. Check your connection and try again.", null);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
  }
  if (!response.ok) {
    const err = (body ?? {}) as { code?: string; message?: string; request_id?: string };
    const apiError = new ApiError(
      response.status,
      err.code ?? `http_${response.status}`,
      err.message ?? (text.slice(0, 200) || `The server answered ${response.status}.`),
      err.request_id ?? response.headers.get("X-Request-Id"),
    );
    if (response.status === 401 && options.auth !== false) onUnauthorized?.();
    throw apiError;
  }
  return body as T;
}

/** A message for people: what went wrong, plus the request id for support. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.requestId ? `${err.message} (request ${err.requestId})` : err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}
