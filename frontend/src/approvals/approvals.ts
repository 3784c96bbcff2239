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

/** "1 of 2 approvals", with who approved so far ("1 of 2 approvals — approved by Alice"); null for an approval one
 * person decides. */
export function quorumLabel(quorum: number | undefined, approvedBy: readonly (string | null)[] = []): string | null {
  if (!quorum || quorum < 2) return null;
  const count = `${approvedBy.length} of ${quorum} approvals`;
  const names = approvedBy.map((n) => n ?? "someone");
  return names.length ? `${count} — approved by ${names.join(", ")}` : count;
}

/** The inbox's copy of an approval (its quorum and approvers), when it is pending and loaded. */
export function inboxApproval(id: string): Approval | undefined {
  return approvals.items.find((a) => a.id === id);
}
