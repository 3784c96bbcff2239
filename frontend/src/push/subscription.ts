/** Web Push subscriptions as the API takes them (one per browser/device); types generated from the API. */

import type { components } from "../api/schema";

export type PushConfig = components["schemas"]["PushConfig"];
export type PushSubscriptionRecord = components["schemas"]["Subscription"];
type SubscriptionIn = components["schemas"]["SubscriptionIn"];

/** The browser's `PushSubscription.toJSON()` as the API takes it (missing keys are the server's to refuse). */
export function subscriptionBody(json: PushSubscriptionJSON): SubscriptionIn {
  return {
    endpoint: json.endpoint ?? "",
    expirationTime: json.expirationTime ?? null,
    keys: { p256dh: json.keys?.p256dh ?? "", auth: json.keys?.auth ?? "" },
  };
}
