/**
 * The run of one chat being followed live: its view built from the run's events (resumed after a reload from
 * sessionStorage), the stream's state, and what stays shown once the run ends (errors, stops, decisions,
 * sub-agents: the stored transcript does not have them).
 */

import { reactive, ref, type Ref } from "vue";

import { call, type Message } from "../api/client";
import { getToken, resolveUrl, streamBase } from "../api/http";
import type { StreamState } from "../stream/eventStream";
import { clearRun, type Following, followRun, loadRun, saveRun } from "../stream/runSession";
import { type LiveItem, newRunView, type RunView } from "../stream/runView";
import type { Generation } from "./generation";
import { type Decision, isActiveStatus, storedItems, type StoredRun } from "./transcript";

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/** What the live run needs from the rest of the chat. */
export interface LiveRunHooks {
  /** The stored transcript's messages, and a reload of its newest page. */
  messages: Ref<Message[]>;
  runs: Ref<Map<string, StoredRun>>;
  reloadTranscript: () => Promise<void>;
  /** A decision made on this page (an approval card keeps it once the run ended). */
  decided: Map<string, Decision>;
  /** An approval was requested, or the run ended (the inbox and the chat list catch up). */
  onApprovalRequested: () => void;
  onEnded: (chatId: string) => void;
}

export function useLiveRun(chatId: Ref<string>, generation: Generation, hooks: LiveRunHooks) {
  const live = ref<RunView | null>(null);
  /** What stays shown of runs that ended, by run id. */
  const notices = reactive(new Map<string, LiveItem[]>());
  const streamState = ref<StreamState | null>(null);
  const streamError = ref<string | null>(null);
  const runMode = ref<string | null>(null);
  let following: Following | null = null;

  function detach(): void {
    following?.stop();
    following = null;
  }

  function reset(): void {
    detach();
    live.value = null;
    notices.clear();
    streamError.value = null;
    streamState.value = null;
    runMode.value = null;
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
    const mine = generation.value;
    let f: Following | null = null; // onState runs once before followRun returns
    f = followRun(current, {
      getToken,
      store,
      isFinished: async () => !isActiveStatus((await call("get_run", { path: { run_id: current.runId } })).status),
      onState(state, err) {
        if (mine !== generation.value || (f !== null && following !== f)) return;
        streamState.value = state;
        if (state === "failed") streamError.value = err ? err.message : "The live stream stopped.";
      },
      onEvent(event) {
        if (event.type === "CUSTOM" && event.name === "approval_requested") hooks.onApprovalRequested();
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
    if (mine !== generation.value || live.value?.runId !== view.runId) return;
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
      await hooks.reloadTranscript();
    } catch {
      // keep showing the live view
    }
    if (mine !== generation.value) return;
    const stored = hooks.messages.value.some((m) => m.run_id === view.runId && m.role !== "user");
    // The stored transcript has the run's messages with their approvals, sub-agents and how the run ended, in place:
    // the view switches to it. Only what it does not have stays (all of it when nothing of the run was stored).
    const have = new Set(storedItems(hooks.messages.value, null, hooks.runs.value).map((i) => `${i.kind}:${i.id}`));
    const kept = view.items
      .filter((i) => !have.has(`${i.kind}:${i.id}`) && !i.id.startsWith("summarised-"))
      .filter((i) => !stored || i.kind === "error" || i.kind === "notice" || i.kind === "approval" || i.kind === "subagent")
      .map((i) => ({ ...i }));
    for (const item of kept) if (item.kind === "assistant") item.streaming = false;
    if (kept.length) notices.set(view.runId, [...(notices.get(view.runId) ?? []), ...kept]);
    live.value = null;
    if (store) clearRun(store, view.chatId);
    hooks.onEnded(view.chatId);
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
    const last = [...hooks.messages.value].reverse().find((m) => m.run_id);
    if (!last?.run_id) return;
    await attachIfActive(last.run_id);
  }

  /** Follow the run `runId` if it still goes (a run we have no saved view of: replayed from its first event). */
  async function attachIfActive(runId: string, known?: { mode?: string | null }): Promise<void> {
    const mine = generation.value;
    let status: string;
    let mode: string | null = known?.mode ?? null;
    try {
      const run = await call("get_run", { path: { run_id: runId } });
      status = run.status;
      mode = run.mode ?? mode;
    } catch {
      return;
    }
    if (mine !== generation.value || !isActiveStatus(status) || live.value?.runId === runId) return;
    // Its stored assistant messages are hidden meanwhile.
    follow(
      newRunView({
        runId,
        chatId: chatId.value,
        eventsUrl: resolveUrl(`/api/v1/runs/${encodeURIComponent(runId)}/events`, streamBase),
        mode,
      }),
    );
  }

  /** Stop the run being followed (an action; leaving the page never stops a run). */
  async function stop(): Promise<void> {
    const view = live.value;
    if (view) await call("cancel_run", { path: { run_id: view.runId } });
  }

  function retryStream(): void {
    if (live.value) follow(live.value);
  }

  /** Keep the saved view current when the page goes away mid-run. */
  function save(): void {
    const store = storage();
    if (store && live.value && live.value.phase === "running") saveRun(store, live.value);
  }

  return {
    live,
    notices,
    streamState,
    streamError,
    runMode,
    follow,
    resumeIfRunning,
    attachIfActive,
    stop,
    retryStream,
    save,
    reset,
    detach,
  };
}
