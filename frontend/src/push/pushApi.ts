/** `/api/v1/push/…`: the server's Web Push settings and this person's subscriptions (one per browser/device). */

import { request } from "../api/http";
import type { components } from "../api/schema";

export type PushConfig = components["schemas"]["PushConfig"];
export type PushSubscriptionRecord = components["schemas"]["Subscription"];
type SubscriptionList = components["schemas"]["SubscriptionList"];
type SubscriptionIn = components["schemas"]["SubscriptionIn"];

const BASE = "/api/v1/push";

/** The browser's `PushSubscription.toJSON()` as the API takes it (missing keys are the server's to refuse). */
function body(json: PushSubscriptionJSON): SubscriptionIn {
  return {
    endpoint: json.endpoint ?? "",
    expirationTime: json.expirationTime ?? null,
    keys: { p256dh: json.keys?.p256dh ?? "", auth: json.keys?.auth ?? "" },
  };
}

export const pushApi = {
  config: () => request<PushConfig>("GET", `${BASE}/config`),
  list: () => request<SubscriptionList>("GET", `${BASE}/subscriptions`),
  /** The same endpoint again answers with the same record. */
  subscribe: (subscription: PushSubscriptionJSON) =>
    request<PushSubscriptionRecord>("POST", `${BASE}/subscriptions`, { body: body(subscription) }),
  remove: (id: string) => request<void>("DELETE", `${BASE}/subscriptions/${encodeURIComponent(id)}`),
};
