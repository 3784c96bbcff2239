import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { PushError, disablePush, enablePush, pushState, pushSupported, urlBase64ToUint8Array } from "./webPush";

// Stand-ins for the browser's APIs (Notification, the service worker registration, its PushManager) and for the
// server's answers over fetch; the module under test, the API client and the HTTP layer are the real ones.
const KEY = "BAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0-P0A";

interface FakeSub {
  endpoint: string;
  options: { applicationServerKey: ArrayBuffer | null };
  unsubscribed: boolean;
  toJSON(): PushSubscriptionJSON;
  unsubscribe(): Promise<boolean>;
}

let permission: NotificationPermission;
let answer: NotificationPermission;
let current: FakeSub | null;
let subscribeError: Error | null;
let subscribedWith: PushSubscriptionOptionsInit[];
let server: { enabled: boolean; key: string | null; status: number; records: { id: string; endpoint: string }[]; postStatus: number };
let calls: string[];

function fakeSub(endpoint: string, key: ArrayBuffer | null): FakeSub {
  const sub: FakeSub = {
    endpoint,
    options: { applicationServerKey: key },
    unsubscribed: false,
    toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh: "p", auth: "a" } }),
    unsubscribe: async () => {
      sub.unsubscribed = true;
      if (current === sub) current = null;
      return true;
    },
  };
  return sub;
}

const pushManager = {
  getSubscription: async () => current,
  subscribe: async (options: PushSubscriptionOptionsInit) => {
    subscribedWith.push(options);
    if (subscribeError) throw subscribeError;
    const key = options.applicationServerKey as Uint8Array;
    current = fakeSub(`https://push.example/${subscribedWith.length}`, key.slice().buffer);
    return current;
  },
};

class FakeNotification {
  static get permission() {
    return permission;
  }
  static requestPermission = async () => {
    calls.push("requestPermission");
    if (permission === "default") permission = answer;
    return permission;
  };
}

function reply(status: number, body?: unknown): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

const fakeFetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = String(input);
  const method = init?.method ?? "GET";
  calls.push(`${method} ${url}`);
  if (url === "/api/v1/push/config") {
    if (server.status !== 200) return reply(server.status, { code: "not_found", message: "Not found" });
    return reply(200, { enabled: server.enabled, public_key: server.key });
  }
  if (url === "/api/v1/push/subscriptions" && method === "GET") {
    return reply(200, { items: server.records.map((r) => ({ ...r, created_at: "2026-12-01T00:00:00Z" })) });
  }
  if (url === "/api/v1/push/subscriptions" && method === "POST") {
    if (server.postStatus !== 201) return reply(server.postStatus, { code: "push_not_configured", message: "Push is not configured." });
    const body = JSON.parse(String(init?.body)) as PushSubscriptionJSON;
    const record = { id: `s${server.records.length + 1}`, endpoint: body.endpoint! };
    server.records.push(record);
    return reply(201, { ...record, created_at: "2026-12-01T00:00:00Z" });
  }
  const id = url.match(/^\/api\/v1\/push\/subscriptions\/(.+)$/)?.[1];
  if (id && method === "DELETE") {
    server.records = server.records.filter((r) => r.id !== id);
    return new Response(null, { status: 204 });
  }
  return reply(404, { code: "not_found", message: "Not found" });
});

function browser({ push = true } = {}) {
  vi.stubGlobal("Notification", FakeNotification);
  vi.stubGlobal("window", push ? { PushManager: class {}, Notification: FakeNotification } : { Notification: FakeNotification });
  vi.stubGlobal("navigator", { serviceWorker: { getRegistration: async () => ({ pushManager }) } });
}

beforeEach(() => {
  permission = "default";
  answer = "granted";
  current = null;
  subscribeError = null;
  subscribedWith = [];
  server = { enabled: true, key: KEY, status: 200, records: [], postStatus: 201 };
  calls = [];
  vi.stubGlobal("fetch", fakeFetch);
  browser();
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("urlBase64ToUint8Array", () => {
  it("decodes an unpadded base64url VAPID key to its 65 bytes", () => {
    const bytes = urlBase64ToUint8Array(KEY);
    expect(bytes.length).toBe(65);
    expect(Array.from(bytes)).toEqual(Array.from({ length: 65 }, (_, i) => (i === 0 ? 4 : i)));
  });

  it("reads the url-safe alphabet and accepts padding", () => {
    expect(Array.from(urlBase64ToUint8Array("-_8"))).toEqual([0xfb, 0xff]);
    expect(Array.from(urlBase64ToUint8Array("AQ=="))).toEqual([1]);
    expect(Array.from(urlBase64ToUint8Array("AQ"))).toEqual([1]);
  });

  it("refuses what is not base64url", () => {
    expect(() => urlBase64ToUint8Array("a+b/")).toThrow();
    expect(() => urlBase64ToUint8Array("abcde")).toThrow();
  });
});

describe("pushState", () => {
  it("is unsupported without a PushManager, and asks nothing of the server", async () => {
    browser({ push: false });
    expect(pushSupported()).toBe(false);
    expect(await pushState()).toBe("unsupported");
    expect(calls).toEqual([]);
  });

  it("is disabled-on-server when the server has no key, or no push routes at all", async () => {
    server.enabled = false;
    server.key = null;
    expect(await pushState()).toBe("disabled-on-server");
    server.status = 404;
    expect(await pushState()).toBe("disabled-on-server");
  });

  it("is denied when the browser blocks notifications for the site", async () => {
    permission = "denied";
    expect(await pushState()).toBe("denied");
  });

  it("is off until the browser's subscription is on record at the server", async () => {
    expect(await pushState()).toBe("off");
    permission = "granted";
    current = fakeSub("https://push.example/old", urlBase64ToUint8Array(KEY).buffer);
    expect(await pushState()).toBe("off");
    server.records.push({ id: "s9", endpoint: "https://push.example/old" });
    expect(await pushState()).toBe("on");
  });
});

describe("enablePush", () => {
  it("asks for permission, subscribes with the server's key and records the subscription", async () => {
    expect(await enablePush()).toBe("on");
    expect(calls[1]).toBe("requestPermission");
    expect(subscribedWith).toHaveLength(1);
    expect(subscribedWith[0]!.userVisibleOnly).toBe(true);
    expect(Array.from(subscribedWith[0]!.applicationServerKey as Uint8Array)).toEqual(Array.from(urlBase64ToUint8Array(KEY)));
    expect(server.records).toEqual([{ id: "s1", endpoint: "https://push.example/1" }]);
    expect(await pushState()).toBe("on");
  });

  it("stops at a denied permission without subscribing", async () => {
    answer = "denied";
    expect(await enablePush()).toBe("denied");
    expect(subscribedWith).toEqual([]);
    expect(server.records).toEqual([]);
  });

  it("says so when the permission prompt is dismissed", async () => {
    answer = "default";
    await expect(enablePush()).rejects.toMatchObject({ code: "permission_dismissed" });
    expect(subscribedWith).toEqual([]);
  });

  it("reports a push service that cannot be reached, and records nothing", async () => {
    subscribeError = new DOMException("Registration failed - push service error", "AbortError");
    const err = await enablePush().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PushError);
    expect((err as PushError).code).toBe("subscribe_failed");
    expect((err as PushError).message).toContain("could not sign up with its push service (Registration failed - push service error)");
    expect(calls.some((c) => c.startsWith("POST"))).toBe(false);
    expect(await pushState()).toBe("off");
  });

  it("says when the browser refuses push for the site although notifications are allowed", async () => {
    for (const name of ["NotAllowedError", "AbortError"]) {
      subscribeError = new DOMException("Registration failed - permission denied", name);
      await expect(enablePush()).rejects.toMatchObject({ code: "subscribe_failed", message: expect.stringContaining("refused a push subscription") });
    }
    expect(server.records).toEqual([]);
  });

  it("undoes the browser subscription when the server refuses it", async () => {
    server.postStatus = 409;
    await expect(enablePush()).rejects.toMatchObject({ code: "server", message: "Push is not configured." });
    expect(current).toBeNull();
    expect(server.records).toEqual([]);
  });

  it("replaces a subscription made for another server key", async () => {
    permission = "granted";
    const stale = fakeSub("https://push.example/stale", new Uint8Array([4, 9, 9]).buffer);
    current = stale;
    expect(await enablePush()).toBe("on");
    expect(stale.unsubscribed).toBe(true);
    expect(server.records.map((r) => r.endpoint)).toEqual(["https://push.example/1"]);
  });

  it("does nothing when the server has push off", async () => {
    server.enabled = false;
    expect(await enablePush()).toBe("disabled-on-server");
    expect(calls).not.toContain("requestPermission");
  });
});

describe("disablePush", () => {
  it("deletes only this device's record and unsubscribes in the browser", async () => {
    await enablePush();
    server.records.push({ id: "other", endpoint: "https://push.example/another-device" });
    const sub = current!;
    expect(await disablePush()).toBe("off");
    expect(sub.unsubscribed).toBe(true);
    expect(server.records).toEqual([{ id: "other", endpoint: "https://push.example/another-device" }]);
    expect(await pushState()).toBe("off");
  });
});
