/**
 * Web Push for approvals, on this device: whether the browser can, whether the server is set up for it, and
 * turning it on (permission, a subscription at the browser's push service, the record on our server) or off.
 * The service worker (public/sw.js) shows the notifications.
 */

import { ApiError, describeError } from "../api/http";
import { call } from "../api/client";
import { type PushConfig, subscriptionBody } from "./subscription";

/** What this device is set to, in the order the checks run. */
export type PushState = "unsupported" | "disabled-on-server" | "denied" | "off" | "on";

/** A failure to say to the person as it is (`message`), with a stable `code` for the UI. */
export class PushError extends Error {
  constructor(
    readonly code: "no_worker" | "permission_dismissed" | "subscribe_failed" | "server",
    message: string,
  ) {
    super(message);
    this.name = "PushError";
  }
}

export function pushSupported(): boolean {
  return (
    typeof navigator !== "undefined" &&
    typeof window !== "undefined" &&
    "serviceWorker" in navigator &&
    "PushManager" in window &&
    "Notification" in window
  );
}

/** A VAPID key as `applicationServerKey` wants it: base64url (padded or not) to bytes. */
export function urlBase64ToUint8Array(base64url: string): Uint8Array<ArrayBuffer> {
  const trimmed = base64url.trim().replace(/=+$/, "");
  if (!/^[A-Za-z0-9_-]*$/.test(trimmed) || trimmed.length % 4 === 1) throw new Error("not a base64url string");
  const base64 = trimmed.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (trimmed.length % 4)) % 4);
  const raw = atob(base64);
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

function sameBytes(a: ArrayBuffer | null | undefined, b: Uint8Array): boolean {
  if (!a) return false;
  const x = new Uint8Array(a);
  return x.length === b.length && x.every((v, i) => v === b[i]);
}

/** The server's settings; a server without the push routes (404) has push off, like one without a key. */
async function serverConfig(): Promise<PushConfig> {
  try {
    return await call("get_push_config");
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { enabled: false, public_key: null };
    throw err;
  }
}

async function registration(): Promise<ServiceWorkerRegistration | null> {
  return (await navigator.serviceWorker.getRegistration("/")) ?? null;
}

/** "on" only when this browser holds a subscription that our server has on record for this person. */
export async function pushState(): Promise<PushState> {
  if (!pushSupported()) return "unsupported";
  const config = await serverConfig();
  if (!config.enabled || !config.public_key) return "disabled-on-server";
  if (Notification.permission === "denied") return "denied";
  if (Notification.permission !== "granted") return "off";
  const subscription = await (await registration())?.pushManager.getSubscription();
  if (!subscription) return "off";
  const { items } = await call("list_push_subscriptions");
  return items.some((s) => s.endpoint === subscription.endpoint) ? "on" : "off";
}

/** Why `pushManager.subscribe` failed, as the browser put it. */
function subscribeFailure(err: unknown): string {
  const reason = err instanceof Error && err.message ? ` (${err.message})` : "";
  // Chromium says "Registration failed - permission denied" (an AbortError) where it has no push service at all.
  const refused = err instanceof Error && (err.name === "NotAllowedError" || /permission denied/i.test(err.message));
  if (refused) {
    return `This browser refused a push subscription for this site${reason}. Some browsers never allow one (private windows, headless browsers, push turned off in the browser's settings).`;
  }
  return `This browser could not sign up with its push service${reason}. It may be offline, or its push service unreachable; try again later.`;
}

export async function enablePush(): Promise<PushState> {
  if (!pushSupported()) return "unsupported";
  const config = await serverConfig();
  if (!config.enabled || !config.public_key) return "disabled-on-server";
  const key = urlBase64ToUint8Array(config.public_key);
  const permission = await Notification.requestPermission();
  if (permission === "denied") return "denied";
  if (permission !== "granted") {
    throw new PushError("permission_dismissed", "Notifications were not allowed: the browser's prompt closed without an answer. Try again to see it.");
  }
  const worker = await registration();
  if (!worker) {
    throw new PushError("no_worker", "The app's service worker is not running in this tab yet. Reload the page and try again.");
  }
  let subscription = await worker.pushManager.getSubscription();
  if (subscription && !sameBytes(subscription.options.applicationServerKey, key)) {
    await subscription.unsubscribe(); // made for an older server key: it could never receive our messages
    subscription = null;
  }
  const created = !subscription;
  if (!subscription) {
    try {
      subscription = await worker.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    } catch (err) {
      throw new PushError("subscribe_failed", subscribeFailure(err));
    }
  }
  try {
    await call("create_push_subscription", { body: subscriptionBody(subscription.toJSON()) });
  } catch (err) {
    if (created) await subscription.unsubscribe().catch(() => false); // nothing half set up
    throw new PushError("server", describeError(err));
  }
  return "on";
}

/** Forget this device on the server, then at the browser's push service. */
export async function disablePush(): Promise<PushState> {
  if (!pushSupported()) return "unsupported";
  const subscription = await (await registration())?.pushManager.getSubscription();
  if (!subscription) return "off";
  const { items } = await call("list_push_subscriptions");
  for (const record of items.filter((s) => s.endpoint === subscription.endpoint)) await call("delete_push_subscription", { path: { subscription_id: record.id } });
  await subscription.unsubscribe();
  return "off";
}
