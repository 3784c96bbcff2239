/**
 * What an answer's run says about it — the model that answered, how long it took, what it cost — from
 * `GET /runs/{id}` (`answered_model`, `started_at`/`finished_at`, `cost_usd`), fetched once per finished run.
 */

import { reactive } from "vue";

import { call, type Run } from "../api/client";

export interface RunFacts {
  model: string | null;
  seconds: number | null;
  cost: number | null;
  /** The agent (and its version) that answered. */
  agent: { slug: string; version: number } | null;
}

const cache = reactive(new Map<string, RunFacts | "loading" | "failed">());

export function factsOf(run: Pick<Run, "answered_model" | "model" | "started_at" | "finished_at" | "cost_usd" | "agent">): RunFacts {
  const start = run.started_at ? Date.parse(run.started_at) : NaN;
  const end = run.finished_at ? Date.parse(run.finished_at) : NaN;
  return {
    model: run.answered_model || run.model || null,
    seconds: Number.isFinite(start) && Number.isFinite(end) ? Math.max(0, (end - start) / 1000) : null,
    cost: typeof run.cost_usd === "number" ? run.cost_usd : run.cost_usd == null ? null : Number(run.cost_usd),
    agent: run.agent ? { slug: run.agent.slug, version: run.agent.version } : null,
  };
}

/** "$0.00", "$0.0042", "$1.25": cents, or four decimals under a cent so a small cost is not shown as nothing. */
export function formatCost(usd: number): string {
  if (usd === 0) return "$0.00";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function formatSeconds(seconds: number): string {
  return seconds < 10 ? `${seconds.toFixed(1)} s` : seconds < 120 ? `${Math.round(seconds)} s` : `${Math.round(seconds / 60)} min`;
}

/** The facts of run `runId` once loaded (null until then); a run still going is asked again later. */
export function runFacts(runId: string | null | undefined): RunFacts | null {
  if (!runId) return null;
  const entry = cache.get(runId);
  if (entry === undefined) {
    cache.set(runId, "loading");
    call("get_run", { path: { run_id: runId } }).then(
      (run) => (run.finished_at ? cache.set(runId, factsOf(run)) : cache.delete(runId)),
      () => cache.set(runId, "failed"),
    );
    return null;
  }
  return typeof entry === "object" ? entry : null;
}
