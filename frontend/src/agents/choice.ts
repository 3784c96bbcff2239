/** The agent a new chat is for: picked on the landing page (or named by `?agent=<slug>`), the built-in assistant
 * otherwise; and the model its composer starts with. */

import { computed, onMounted, ref, watch } from "vue";
import type { RouteLocationNormalizedLoaded } from "vue-router";

import { models } from "../state/models";
import { type Agent, agentBySlug, BUILTIN_SLUG, loadAgents } from "./agents";

export function useAgentChoice(route: RouteLocationNormalizedLoaded) {
  const fromRoute = () => (typeof route.query.agent === "string" && route.query.agent ? route.query.agent : BUILTIN_SLUG);
  const slug = ref(fromRoute());
  watch(() => route.query.agent, () => (slug.value = fromRoute()));
  onMounted(() => void loadAgents());
  const picked = computed(() => agentBySlug(slug.value));
  /** The slug to bind a new chat to (undefined: the built-in assistant, the server's default). */
  const bind = computed(() => (slug.value === BUILTIN_SLUG ? undefined : slug.value));
  return { slug, picked, bind };
}

/** The agent's own model when the composer offers it, else `current`. */
export function agentModel(agent: Pick<Agent, "model"> | null, current: string): string {
  const wanted = agent?.model;
  if (!wanted) return current;
  return wanted === "auto" || models.items.some((m) => m.id === wanted) ? wanted : current;
}
