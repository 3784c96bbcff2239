/**
 * One open chat: its stored transcript (the newest page, older pages on request), the run being followed
 * live (resumed after a reload from sessionStorage), runs that start elsewhere (the feed), sending,
 * stopping and approvals.
 */

import { computed, onBeforeUnmount, reactive, ref, shallowRef, watch, type Ref } from "vue";

import { call } from "../api/client";
import type { Approval, Chat, RunMode } from "../api/client";
import { ApiError, describeError, getToken, resolveUrl, streamBase } from "../api/http";
import { loadApprovals, markDecided, pendingApprovals } from "../state/approvals";
import { refreshChat, renameChat } from "../state/chats";
import { onFeed, onFeedReconnect } from "../state/feed";
import type { StreamState } from "../stream/eventStream";
import { clearRun, type Following, followRun, loadRun, saveRun } from "../stream/runSession";
import { type ApprovalStatus, type LiveItem, newRunView, type RunView } from "../stream/runView";
import { cutAt } from "./branches";
import { EMPTY, fromNewest, type LoadedTranscript, withNewest, withOlder } from "./paging";
import { buildTranscript, isActiveStatus } from "./transcript";

/** A message that starts a new branch: an edit (a new user turn after `parent`) or a regenerate of `parent`'s
 * answer; `itemId` is the transcript item edited or answered again (the view is cut there while the run goes). */
export interface BranchRequest {
  parent: number | null;
  regenerate: boolean;
  itemId: string;
}

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

export function useChat(chatId: Ref<string>) {
  const chat = ref<Chat | null>(null);
  const transcript = shallowRef<LoadedTranscript>(EMPTY);
  const messages = computed(() => transcript.value.messages);
  const hasEarlier = computed(() => transcript.value.older !== null);
  const loadingEarlier = ref(false);
  const live = ref<RunView | null>(null);
  const notices = reactive(new Map<string, LiveItem[]>());
  const decided = reactive(new Map<string, ApprovalStatus>());
  const sending = ref<string | null>(null);
  const loading = ref(false);
  const error = ref<string | null>(null);
  const streamState = ref<StreamState | null>(null);
  const streamError = ref<string | null>(null);
  const runMode = ref<string | null>(null);
  /** The branch shown: a message on it (null: the chat's latest branch); and where the model's summary ends. */
  const leaf = ref<number | null>(null);
  const summarisedUpto = ref<number | null>(null);
  let following: Following | null = null;
  let generation = 0;

  const approvalsHere = computed<Approval[]>(() => pendingApprovals(chatId.value));
  const items = computed(() =>
    buildTranscript({
      messages: messages.value,
      live: live.value,
      notices,
      approvals: approvalsHere.value,
      decided,
      sending: sending.value,
    }),
  );
  const running = computed(() => live.value?.phase === "running");

  function detach(): void {
    following?.stop();
    following = null;
  }

  async function reloadMessages(): Promise<void> {
    const page = await call("chat_transcript", { path: { chat_id: chatId.value }, query: leaf.value !== null ? { leaf: leaf.value } : {} });
    transcript.value = withNewest(transcript.value, page);
    summarisedUpto.value = page.summarised_upto ?? null;
  }

  /** Show the branch through message `id` (‹ / › between versions of a turn or an answer). */
  async function showBranch(id: number): Promise<void> {
    const mine = generation;
    try {
      const page = await call("chat_transcript", { path: { chat_id: chatId.value }, query: { leaf: id } });
      if (mine !== generation) return;
      leaf.value = page.leaf_id ?? id; // the branch's newest message: a new turn continues from there
      transcript.value = fromNewest(page);
      summarisedUpto.value = page.summarised_upto ?? null;
    } catch (err) {
      if (mine === generation) error.value = describeError(err);
    }
  }

  /** The page before the oldest item loaded, put in front. */
  async function loadEarlier(): Promise<void> {
    const cursor = transcript.value.older;
    if (cursor === null || loadingEarlier.value) return;
    const mine = generation;
    loadingEarlier.value = true;
    try {
      const page = await call("chat_transcript", { path: { chat_id: chatId.value }, query: { cursor, ...(leaf.value !== null ? { leaf: leaf.value } : {}) } });
      // Another chat, or a reload that started again from the newest page: this page no longer fits.
      if (mine !== generation || transcript.value.older !== cursor) return;
      transcript.value = withOlder(transcript.value, page);
    } catch (err) {
      if (mine === generation) error.value = describeError(err);
    } finally {
      if (mine === generation) loadingEarlier.value = false;
    }
  }

  /** Follow `view` (reactive) from its last event id; reconcile with the stored transcript at the end. */
  function follow(view: RunView): void {
    detach();
    const store = storage();
    live.value = view;
    const current = live.value; // the reactive proxy: mutations re-render
    runMode.value = view.mode;
    streamError.value = null;
    if (store) saveRun(store, current);
    const mine = generation;
    let f: Following | null = null; // onState runs once before followRun returns
    f = followRun(current, {
      getToken,
      store,
      isFinished: async () => !isActiveStatus((await call("get_run", { path: { run_id: current.runId } })).status),
      onState(state, err) {
        if (mine !== generation || (f !== null && following !== f)) return;
        streamState.value = state;
        if (state === "failed") streamError.value = err ? err.message : "The live stream stopped.";
      },
      onEvent(event) {
        if (event.type === "CUSTOM" && event.name === "approval_requested") void loadApprovals();
      },
    });
    const started: Following = f;
    following = started;
    streamState.value = started.stream.state;
    void started.done.then(() => {
      if (following === started && started.stream.state === "done") void finished(current, mine);
    });
  }

  async function finished(view: RunView, mine: number): Promise<void> {
    if (mine !== generation || live.value?.runId !== view.runId) return;
    const store = storage();
    if (view.phase === "running") {
      // The relay closed and the run is over (isFinished) without a terminal event on the bus.
      view.phase = "finished";
      for (const item of view.items) if (item.kind === "assistant") item.streaming = false;
    }
    if (view.phase === "expired") {
      notices.set(view.runId, [
        { kind: "notice", id: `expired-${view.runId}`, text: "Live updates for this run are no longer kept; the saved transcript is shown." },
      ]);
    }
    try {
      await reloadMessages();
    } catch {
      // keep showing the live view
    }
    if (mine !== generation) return;
    const stored = messages.value.some((m) => m.run_id === view.runId && m.role !== "user");
    // Stored messages have the tool calls and results but not errors, stops, decisions or sub-agents: keep those.
    // When nothing of the run was stored (a stop or an error before the first answer was saved), keep it all.
    const kept = view.items
      .filter((i) => !stored || i.kind === "error" || i.kind === "notice" || i.kind === "approval" || i.kind === "subagent")
      .map((i) => (i.kind === "approval" ? { ...i, status: decided.get(i.id) ?? i.status } : { ...i }));
    for (const item of kept) if (item.kind === "assistant") item.streaming = false;
    if (kept.length) notices.set(view.runId, [...(notices.get(view.runId) ?? []), ...kept]);
    live.value = null;
    if (store) clearRun(store, view.chatId);
    void refreshChat(view.chatId);
    void loadApprovals();
  }

  /** After the transcript loaded: is a run of this chat still going (started here before a reload, or elsewhere)? */
  async function resumeIfRunning(): Promise<void> {
    const store = storage();
    const saved = store ? loadRun(store, chatId.value) : null;
    if (saved && saved.phase === "running") {
      follow(saved);
      return;
    }
    if (saved && store) clearRun(store, chatId.value);
    const last = [...messages.value].reverse().find((m) => m.run_id);
    if (!last?.run_id) return;
    await attachIfActive(last.run_id);
  }

  async function attachIfActive(runId: string, known?: { mode?: string | null }): Promise<void> {
    const mine = generation;
    let status: string;
    let mode: string | null = known?.mode ?? null;
    try {
      const run = await call("get_run", { path: { run_id: runId } });
      status = run.status;
      mode = run.mode ?? mode;
    } catch {
      return;
    }
    if (mine !== generation || !isActiveStatus(status) || live.value?.runId === runId) return;
    // A run we have no saved view of: replay its events from the start (its stored assistant messages are hidden meanwhile).
    follow(
      newRunView({
        runId,
        chatId: chatId.value,
        eventsUrl: resolveUrl(`/api/v1/runs/${encodeURIComponent(runId)}/events`, streamBase),
        mode,
      }),
    );
  }

  async function load(): Promise<void> {
    const mine = ++generation;
    detach();
    live.value = null;
    notices.clear();
    transcript.value = EMPTY;
    leaf.value = null;
    summarisedUpto.value = null;
    loadingEarlier.value = false;
    chat.value = null;
    error.value = null;
    streamError.value = null;
    streamState.value = null;
    runMode.value = null;
    loading.value = true;
    try {
      const [c, page] = await Promise.all([call("get_chat", { path: { chat_id: chatId.value } }), call("chat_transcript", { path: { chat_id: chatId.value } })]);
      if (mine !== generation) return;
      chat.value = c;
      transcript.value = fromNewest(page);
      summarisedUpto.value = page.summarised_upto ?? null;
      void loadApprovals();
      await resumeIfRunning();
    } catch (err) {
      if (mine !== generation) return;
      error.value = err instanceof ApiError && err.status === 404 ? "This chat does not exist (or was deleted)." : describeError(err);
    } finally {
      if (mine === generation) loading.value = false;
    }
  }

  /** A chat still called "New chat" is named after its first message (the API does not title chats). */
  function titleFromFirstMessage(message: string): void {
    const current = chat.value;
    const untitled = !current?.title || current.title === "New chat";
    if (!current || !untitled || messages.value.some((m) => m.role === "user")) return;
    const line = message.split("\n")[0]!.trim();
    const title = line.length > 60 ? `${line.slice(0, 57).trimEnd()}…` : line;
    void renameChat(current.id, title)
      .then(() => {
        if (chat.value?.id === current.id) chat.value = { ...chat.value, title };
      })
      .catch(() => undefined);
  }

  /** `tools`: the chat's tool choice (null: the server's defaults). */
  /** `branch`: an edit or a regenerate (`chat/branches.ts`); otherwise the turn continues the branch shown. */
  async function send(
    text: string,
    model: string,
    mode: RunMode,
    attachments: string[] = [],
    tools: string[] | null = null,
    branch: BranchRequest | null = null,
  ): Promise<boolean> {
    const message = branch?.regenerate ? "" : text.trim();
    if ((!message && !branch?.regenerate) || sending.value !== null || running.value) return false;
    if (!branch) titleFromFirstMessage(message);
    const parent = branch ? { parent_message_id: branch.parent, regenerate: branch.regenerate } : leaf.value !== null ? { parent_message_id: leaf.value } : {};
    sending.value = branch?.regenerate ? null : message;
    error.value = null;
    const mine = generation;
    try {
      const started = await call("start_run", { path: { chat_id: chatId.value }, body: {
        message,
        model,
        mode,
        ...(attachments.length ? { attachments } : {}),
        ...(tools ? { tools } : {}),
        ...parent,
      } });
      if (mine !== generation) return true;
      sending.value = null;
      if (branch) transcript.value = { ...transcript.value, messages: cutAt(transcript.value.messages, branch.itemId, branch.regenerate) };
      leaf.value = null; // the new run's branch is now the chat's latest
      follow(
        newRunView({
          runId: started.run_id,
          chatId: chatId.value,
          eventsUrl: resolveUrl(started.events_url, streamBase),
          mode: started.mode,
          model,
          userText: message,
        }),
      );
      // The user's turn is stored at launch: show it with its files while the answer streams.
      if (attachments.length) void reloadMessages().catch(() => undefined);
      void refreshChat(chatId.value);
      return true;
    } catch (err) {
      sending.value = null;
      error.value = describeError(err);
      return false;
    }
  }

  async function stop(): Promise<void> {
    const view = live.value;
    if (!view) return;
    try {
      await call("cancel_run", { path: { run_id: view.runId } });
    } catch (err) {
      error.value = describeError(err);
    }
  }

  function retryStream(): void {
    if (live.value) follow(live.value);
  }

  function approvalDecided(id: string, status: "approved" | "denied"): void {
    decided.set(id, status);
    markDecided(id, status);
    void loadApprovals();
  }

  // Runs that start or finish elsewhere (another tab, a webhook, a schedule).
  const unsubscribe = onFeed((event) => {
    if (event.value.chat_id !== chatId.value) return;
    if (event.name === "run_started" && !running.value && sending.value === null) {
      // Its user message is stored at launch: show it, then follow the run from its first event.
      void reloadMessages()
        .catch(() => undefined)
        .then(() => attachIfActive(event.value.run_id));
    } else if (event.name === "run_finished" && live.value?.runId !== event.value.run_id) {
      void reloadMessages().catch(() => undefined);
    }
  });

  const unsubscribeReconnect = onFeedReconnect(() => {
    if (live.value || sending.value !== null || loading.value) return;
    void reloadMessages()
      .then(resumeIfRunning)
      .catch(() => undefined);
  });

  // Keep the saved view current when the page goes away mid-run.
  const save = () => {
    const store = storage();
    if (store && live.value && live.value.phase === "running") saveRun(store, live.value);
  };
  window.addEventListener("pagehide", save);

  onBeforeUnmount(() => {
    generation++;
    save();
    detach();
    unsubscribe();
    unsubscribeReconnect();
    window.removeEventListener("pagehide", save);
  });

  watch(chatId, load, { immediate: true });

  return { chat, items, messages, live, running, sending, loading, error, streamState, streamError, runMode, hasEarlier, loadingEarlier, summarisedUpto, send, stop, retryStream, approvalDecided, loadEarlier, showBranch, reload: load };
}
