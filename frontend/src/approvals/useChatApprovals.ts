/** The approvals of one open chat: the pending ones (from the inbox, `approvals.ts`) and the decisions made on this
 * page, which the live run's approval cards show until the stored transcript has the run. */

import { computed, reactive, type Ref } from "vue";

import type { Approval } from "../api/client";
import type { Decision } from "../chat/transcript";
import { loadApprovals, markDecided, pendingApprovals } from "./approvals";

export function useChatApprovals(chatId: Ref<string>) {
  const decided = reactive(new Map<string, Decision>());
  const pending = computed<Approval[]>(() => pendingApprovals(chatId.value));

  function approvalDecided(id: string, status: "approved" | "denied", reason: string | null = null): void {
    decided.set(id, { status, reason });
    markDecided(id, status);
    void loadApprovals();
  }

  return { decided, pending, approvalDecided, refresh: loadApprovals };
}
