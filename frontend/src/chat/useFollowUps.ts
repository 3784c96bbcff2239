/** The messages queued behind an open chat's active run (sent while an answer streamed, under the chat's `enqueue`
 * or `interrupt` policy): shown under the transcript, each cancellable until its run starts. */

import { ref, type Ref } from "vue";

import { call } from "../api/client";
import type { components } from "../api/schema";
import { describeError } from "../api/http";

export type FollowUp = components["schemas"]["FollowUp"];

/** The body of a 202 `followup_queued` (the API's error shape, since the message did not start a run yet). */
export function isQueued(body: unknown): boolean {
  return !!body && typeof body === "object" && (body as { code?: unknown }).code === "followup_queued";
}

export function useFollowUps(chatId: Ref<string>, error: Ref<string | null>) {
  const queued = ref<FollowUp[]>([]);

  async function refresh(): Promise<void> {
    const chat = chatId.value;
    try {
      const page = await call("list_followups", { path: { chat_id: chat } });
      if (chat === chatId.value) queued.value = page.items;
    } catch {
      // keep what is shown; the next run's start or end refreshes it
    }
  }

  async function cancel(id: string): Promise<void> {
    try {
      await call("cancel_followup", { path: { chat_id: chatId.value, followup_id: id } });
    } catch (err) {
      error.value = describeError(err);
    }
    await refresh();
  }

  return { queued, refresh, cancel };
}
