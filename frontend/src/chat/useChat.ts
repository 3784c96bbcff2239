/**
 * One open chat: its stored transcript (`useTranscript`), the run followed live (`useLiveRun`) and its approvals
 * (`useChatApprovals`), put together with sending, and with runs that start elsewhere (the feed).
 */

import { computed, onBeforeUnmount, ref, watch, type Ref } from "vue";

import { call, type In, type RunMode } from "../api/client";
import { ApiError, describeError, resolveUrl, streamBase } from "../api/http";
import { useChatApprovals } from "../approvals/useChatApprovals";
import { onFeed, onFeedReconnect } from "../state/feed";
import { newRunView } from "../stream/runView";
import { chatTitle, refreshChat } from "./chats";
import type { Generation } from "./generation";
import { buildTranscript } from "./transcript";
import { type BranchRequest, useTranscript } from "./useTranscript";
import { isQueued, useFollowUps } from "./useFollowUps";
import { useLiveRun } from "./useLiveRun";

export type { BranchRequest } from "./useTranscript";
/** Fields of a run's body beyond the message, model, mode, tools and branch. */
export type RunExtras = Pick<In<"start_run">, "agent_version">;

/** `runExtras`: more of each run's body, asked for just before it starts (the agent editor's try pane: the draft
 * version to run, saved first); an error it throws is the send's. */
export function useChat(chatId: Ref<string>, runExtras?: () => Promise<RunExtras>) {
  const generation: Generation = { value: 0 };
  const error = ref<string | null>(null);
  const loading = ref(false);
  const sending = ref<string | null>(null);
  const transcript = useTranscript(chatId, generation, error);
  const approvals = useChatApprovals(chatId);
  const followUps = useFollowUps(chatId, error);
  const run = useLiveRun(chatId, generation, {
    messages: transcript.messages,
    runs: transcript.runs,
    reloadTranscript: transcript.reload,
    decided: approvals.decided,
    onApprovalRequested: () => void approvals.refresh(),
    onEnded: (id) => {
      void refreshChat(id).then((fresh) => {
        // The server names a new chat when its first run ends: the pane's header follows (a title it shows stays).
        const open = transcript.chat.value;
        if (fresh && open?.id === fresh.id && chatTitle(open) === "New chat") transcript.chat.value = { ...open, title: fresh.title };
      });
      void approvals.refresh();
      // A message queued behind the run starts now: follow it once its turn is stored.
      void followUps.refresh().then(() => (live.value ? undefined : run.resumeIfRunning()));
    },
  });
  const { live } = run;

  const items = computed(() =>
    buildTranscript({
      messages: transcript.messages.value,
      runs: transcript.runs.value,
      live: live.value,
      notices: run.notices,
      approvals: approvals.pending.value,
      decided: approvals.decided,
      sending: sending.value,
    }),
  );
  const running = computed(() => live.value?.phase === "running");

  async function load(): Promise<void> {
    const mine = ++generation.value;
    run.reset();
    transcript.reset();
    error.value = null;
    loading.value = true;
    try {
      await transcript.open();
      if (mine !== generation.value) return;
      void approvals.refresh();
      void followUps.refresh();
      await run.resumeIfRunning();
    } catch (err) {
      if (mine !== generation.value) return;
      error.value = err instanceof ApiError && err.status === 404 ? "This chat does not exist (or was deleted)." : describeError(err);
    } finally {
      if (mine === generation.value) loading.value = false;
    }
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
    // While an answer streams a new message is still sent (the chat's policy queues it); an edit or regenerate waits.
    if ((!message && !branch?.regenerate) || sending.value !== null || (running.value && branch)) return false;
    const parent = transcript.parentOf(branch);
    sending.value = branch?.regenerate ? null : message;
    error.value = null;
    const mine = generation.value;
    try {
      const extras = runExtras ? await runExtras() : {};
      const started = await call("start_run", {
        path: { chat_id: chatId.value },
        body: {
          message,
          model,
          mode,
          ...(attachments.length ? { attachments } : {}),
          ...(tools ? { tools } : {}),
          ...parent,
          ...extras,
        },
      });
      if (mine !== generation.value) return true;
      sending.value = null;
      if (isQueued(started)) {
        void followUps.refresh();
        return true;
      }
      transcript.runStarted(branch);
      run.follow(
        newRunView({
          runId: started.run_id,
          chatId: chatId.value,
          eventsUrl: resolveUrl(started.events_url, streamBase),
          mode: started.mode,
          model,
          userText: message,
        }),
      );
      // The user's turn is stored at launch: show it as stored (its files, its place among the branches) while the
      // answer streams, as a reload would. A regenerate stored none yet: the latest branch is still the old answer.
      if (!branch?.regenerate) void transcript.reload().catch(() => undefined);
      void refreshChat(chatId.value);
      return true;
    } catch (err) {
      sending.value = null;
      error.value = describeError(err);
      return false;
    }
  }

  async function stop(): Promise<void> {
    try {
      await run.stop();
    } catch (err) {
      error.value = describeError(err);
    }
  }

  // Runs that start or finish elsewhere (another tab, a webhook, a schedule).
  const unsubscribe = onFeed((event) => {
    if (event.value.chat_id !== chatId.value) return;
    if (event.name === "run_started" || event.name === "run_finished") void followUps.refresh();
    if (event.name === "run_started" && !running.value && sending.value === null) {
      // Its user message is stored at launch: show it, then follow the run from its first event.
      void transcript
        .reload()
        .catch(() => undefined)
        .then(() => run.attachIfActive(event.value.run_id));
    } else if (event.name === "run_finished" && live.value?.runId !== event.value.run_id) {
      void transcript.reload().catch(() => undefined);
    }
  });

  const unsubscribeReconnect = onFeedReconnect(() => {
    if (live.value || sending.value !== null || loading.value) return;
    void transcript
      .reload()
      .then(run.resumeIfRunning)
      .catch(() => undefined);
  });

  window.addEventListener("pagehide", run.save);

  onBeforeUnmount(() => {
    generation.value++;
    run.save();
    run.detach();
    unsubscribe();
    unsubscribeReconnect();
    window.removeEventListener("pagehide", run.save);
  });

  watch(chatId, load, { immediate: true });

  return {
    chat: transcript.chat,
    items,
    messages: transcript.messages,
    live,
    running,
    sending,
    loading,
    error,
    streamState: run.streamState,
    streamError: run.streamError,
    runMode: run.runMode,
    hasEarlier: transcript.hasEarlier,
    loadingEarlier: transcript.loadingEarlier,
    summarisedUpto: transcript.summarisedUpto,
    send,
    stop,
    retryStream: run.retryStream,
    approvalDecided: approvals.approvalDecided,
    queued: followUps.queued,
    cancelQueued: followUps.cancel,
    loadEarlier: transcript.loadEarlier,
    showBranch: transcript.showBranch,
    reload: load,
  };
}
