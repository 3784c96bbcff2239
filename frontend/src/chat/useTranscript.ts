/**
 * A chat's stored transcript: the chat, its newest page of messages (older pages on request), the branch shown and
 * where the model's summary ends. Postgres is the source of truth; the live run is shown beside it (`useLiveRun`).
 */

import { computed, ref, shallowRef, type Ref } from "vue";

import { call, type Chat, type Message } from "../api/client";
import type { StoredRun } from "./transcript";
import { describeError } from "../api/http";
import { cutAt } from "./branches";
import type { Generation } from "./generation";
import { EMPTY, fromNewest, type LoadedTranscript, withNewest, withOlder } from "./paging";

/** A message that starts a new branch: an edit (a new user turn after `parent`) or a regenerate of `parent`'s
 * answer; `itemId` is the transcript item edited or answered again (the view is cut there while the run goes). */
export interface BranchRequest {
  parent: number | null;
  regenerate: boolean;
  itemId: string;
}

/** `error`: where a failed page load is told (the chat's one error line). */
export function useTranscript(chatId: Ref<string>, generation: Generation, error: Ref<string | null>) {
  const chat = ref<Chat | null>(null);
  const transcript = shallowRef<LoadedTranscript>(EMPTY);
  const messages = computed<Message[]>(() => transcript.value.messages);
  const hasEarlier = computed(() => transcript.value.older !== null);
  const loadingEarlier = ref(false);
  /** The branch shown: a message on it (null: the chat's latest branch); and where the model's summary ends. */
  const leaf = ref<number | null>(null);
  const summarisedUpto = ref<number | null>(null);
  /** How each run of the loaded pages ended (or goes), by id. */
  const runs = shallowRef(new Map<string, StoredRun>());

  function addRuns(page: { runs?: StoredRun[] | null }, fresh = false): void {
    const next = new Map(fresh ? [] : runs.value);
    for (const run of page.runs ?? []) next.set(run.id, run);
    runs.value = next;
  }

  function reset(): void {
    chat.value = null;
    transcript.value = EMPTY;
    leaf.value = null;
    summarisedUpto.value = null;
    runs.value = new Map();
    loadingEarlier.value = false;
    error.value = null;
  }

  /** The chat and its newest page (throws: the caller says what went wrong). */
  async function open(): Promise<void> {
    const mine = generation.value;
    const [c, page] = await Promise.all([
      call("get_chat", { path: { chat_id: chatId.value } }),
      call("chat_transcript", { path: { chat_id: chatId.value } }),
    ]);
    if (mine !== generation.value) return;
    chat.value = c;
    transcript.value = fromNewest(page);
    addRuns(page, true);
    summarisedUpto.value = page.summarised_upto ?? null;
  }

  /** The newest page again (after a run, or a run that started elsewhere). */
  async function reload(): Promise<void> {
    const query = leaf.value !== null ? { leaf: leaf.value } : {};
    const page = await call("chat_transcript", { path: { chat_id: chatId.value }, query });
    transcript.value = withNewest(transcript.value, page);
    addRuns(page);
    summarisedUpto.value = page.summarised_upto ?? null;
  }

  /** Show the branch through message `id` (‹ / › between versions of a turn or an answer). */
  async function showBranch(id: number): Promise<void> {
    const mine = generation.value;
    try {
      const page = await call("chat_transcript", { path: { chat_id: chatId.value }, query: { leaf: id } });
      if (mine !== generation.value) return;
      leaf.value = page.leaf_id ?? id; // the branch's newest message: a new turn continues from there
      transcript.value = fromNewest(page);
      addRuns(page, true);
      summarisedUpto.value = page.summarised_upto ?? null;
    } catch (err) {
      if (mine === generation.value) error.value = describeError(err);
    }
  }

  /** The page before the oldest item loaded, put in front. */
  async function loadEarlier(): Promise<void> {
    const cursor = transcript.value.older;
    if (cursor === null || loadingEarlier.value) return;
    const mine = generation.value;
    loadingEarlier.value = true;
    try {
      const query = { cursor, ...(leaf.value !== null ? { leaf: leaf.value } : {}) };
      const page = await call("chat_transcript", { path: { chat_id: chatId.value }, query });
      // Another chat, or a reload that started again from the newest page: this page no longer fits.
      if (mine !== generation.value || transcript.value.older !== cursor) return;
      transcript.value = withOlder(transcript.value, page);
      addRuns(page);
    } catch (err) {
      if (mine === generation.value) error.value = describeError(err);
    } finally {
      if (mine === generation.value) loadingEarlier.value = false;
    }
  }

  /** Where a new run's message goes: after the branch's message, or the branch point of an edit or a regenerate. */
  function parentOf(branch: BranchRequest | null): { parent_message_id?: number | null; regenerate?: boolean } {
    if (branch) return { parent_message_id: branch.parent, regenerate: branch.regenerate };
    return leaf.value !== null ? { parent_message_id: leaf.value } : {};
  }

  /** A run started: an edit or a regenerate cuts the view where it branches; its branch is now the chat's latest. */
  function runStarted(branch: BranchRequest | null): void {
    if (branch) transcript.value = { ...transcript.value, messages: cutAt(transcript.value.messages, branch.itemId, branch.regenerate) };
    leaf.value = null;
  }

  return {
    chat,
    messages,
    runs,
    hasEarlier,
    loadingEarlier,
    summarisedUpto,
    reset,
    open,
    reload,
    showBranch,
    loadEarlier,
    parentOf,
    runStarted,
  };
}
