/**
 * Where a tool call's tool comes from — its MCP server, the server's trust tier, whether its results are
 * untrusted — from the run's tool snapshot (`GET /runs/{id}` `tools`), fetched once per run and kept.
 */

import { reactive } from "vue";

import { call, type Run, type RunTool } from "../api/client";

export interface ToolSource {
  server: string | null;
  tier: number;
  untrusted: boolean;
  acts: boolean;
}

export function sourcesOf(tools: RunTool[]): Map<string, ToolSource> {
  return new Map(tools.map((t) => [t.name, { server: t.server, tier: t.trust_tier, untrusted: t.untrusted, acts: t.acts }]));
}

type Entry = Map<string, ToolSource> | "loading" | "failed";
const runs = reactive(new Map<string, Entry>());

/** The source of `name` in run `runId` once its snapshot is loaded (null until then, or when unknown). */
export function toolSource(runId: string | null | undefined, name: string): ToolSource | null {
  const entry = runId ? runs.get(runId) : undefined;
  return entry instanceof Map ? (entry.get(name) ?? null) : null;
}

/** Load the snapshot of each run not asked for yet (a run's toolset never changes after launch). */
export function loadSources(runIds: Iterable<string>, getRun: (id: string) => Promise<Pick<Run, "tools">> = (id) => call("get_run", { path: { run_id: id } })): void {
  for (const id of runIds) {
    if (runs.has(id)) continue;
    runs.set(id, "loading");
    getRun(id).then(
      (run) => runs.set(id, sourcesOf(run.tools ?? [])),
      () => runs.set(id, "failed"),
    );
  }
}

/** The run ids of the tool items shown (for `loadSources`). */
export function toolRunIds(items: { kind: string; runId?: string | null }[]): string[] {
  return [...new Set(items.filter((i) => i.kind === "tool" && i.runId).map((i) => i.runId!))];
}

export function forgetSources(): void {
  runs.clear();
}
