/**
 * The passage dialog a person opened from an answer's sources, kept outside the answer's component: when a run ends
 * the live answer is replaced by the stored one (a new component with the same sources), and the dialog stays open
 * across that switch instead of vanishing under the reader. A list is known by its sources' chunk ids in order.
 */
import { ref } from "vue";

import { type Citation } from "./citations";

export const openPassage = ref<{ list: string; citation: Citation } | null>(null);
const mounted = new Map<string, number>();

export const listKey = (citations: Citation[]): string => citations.map((c) => c.chunkId).join(",");

export function listMounted(list: string): void {
  mounted.set(list, (mounted.get(list) ?? 0) + 1);
}

/** A list left the page: once the switch has settled, a dialog no list of its sources shows any more is closed. */
export function listUnmounted(list: string): void {
  mounted.set(list, (mounted.get(list) ?? 1) - 1);
  setTimeout(() => {
    if ((mounted.get(list) ?? 0) > 0) return;
    mounted.delete(list);
    if (openPassage.value?.list === list) openPassage.value = null;
  }, 0);
}
