/** Pending approvals for the signed-in user (the inbox, its count in the navigation, chat cards). */

import { reactive } from "vue";

import { call } from "../api/client";
import type { Approval } from "../api/client";
import { describeError } from "../api/http";

export const approvals = reactive({
  items: [] as Approval[],
  loading: false,
  error: null as string | null,
  loaded: false,
});

export async function loadApprovals(): Promise<void> {
  approvals.loading = true;
  try {
    const page = await call("list_approvals", { query: { status: "pending" } });
    approvals.items = page.items;
    approvals.error = null;
  } catch (err) {
    approvals.error = describeError(err);
  } finally {
    approvals.loading = false;
    approvals.loaded = true;
  }
}

export function pendingApprovals(chatId?: string): Approval[] {
  return approvals.items.filter((a) => a.status === "pending" && (!chatId || a.chat_id === chatId));
}

export function markDecided(id: string, status: Approval["status"]): void {
  approvals.items = approvals.items.map((a) => (a.id === id ? { ...a, status } : a));
}
