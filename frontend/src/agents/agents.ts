/** The agents this user sees (`GET /api/v1/agents`): the org's shared ones, the built-in `assistant` and their own.
 * Loaded once per session for the new chat's picker and the answers' detail line; the Explore page searches. */

import { reactive } from "vue";

import { call } from "../api/client";
import type { components } from "../api/schema";
import { describeError } from "../api/http";

export type Agent = components["schemas"]["Agent"];
export type AgentCreate = components["schemas"]["AgentCreate"];
export type AgentPatch = components["schemas"]["AgentPatch"];
export type AgentVersion = components["schemas"]["AgentVersion"];
export type AgentDiff = components["schemas"]["AgentDiff"];
export type AgentChange = components["schemas"]["AgentChange"];

export const BUILTIN_SLUG = "assistant";

export const agents = reactive({ items: [] as Agent[], loaded: false, error: null as string | null });

let loading: Promise<void> | null = null;

/** Load the agents (again with `force`, e.g. after one was created or changed). */
export function loadAgents(force = false): Promise<void> {
  if (loading && !force) return loading;
  loading = call("list_agents").then(
    (list) => {
      agents.items = list.items;
      agents.error = null;
      agents.loaded = true;
    },
    (err: unknown) => {
      agents.error = describeError(err);
      agents.loaded = true;
      loading = null;
    },
  );
  return loading;
}

/** Put a created or changed agent in the list (no reload). */
export function remember(agent: Agent): void {
  const others = agents.items.filter((a) => a.id !== agent.id);
  agents.items = [...others, agent].sort(byName);
}

export function forget(id: string): void {
  agents.items = agents.items.filter((a) => a.id !== id);
}

export function byName(a: Pick<Agent, "builtin" | "name">, b: Pick<Agent, "builtin" | "name">): number {
  if (a.builtin !== b.builtin) return a.builtin ? -1 : 1;
  return a.name.localeCompare(b.name);
}

export function agentById(id: string | null | undefined): Agent | null {
  return id ? (agents.items.find((a) => a.id === id) ?? null) : null;
}

export function agentBySlug(slug: string | null | undefined): Agent | null {
  return slug ? (agents.items.find((a) => a.slug === slug) ?? null) : null;
}

export type Scope = "all" | "org" | "mine";

/** The agents of `scope`: the org's (shared and built-in) or the caller's own (`userId`). */
export function inScope(items: Agent[], scope: Scope, userId: string | null | undefined): Agent[] {
  if (scope === "org") return items.filter((a) => a.builtin || a.visibility === "org");
  if (scope === "mine") return items.filter((a) => !!userId && a.owner_id === userId);
  return items;
}
