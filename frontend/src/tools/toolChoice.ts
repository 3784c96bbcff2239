/**
 * The tools a chat's runs get, chosen in the composer and remembered per chat in this browser. No saved choice
 * means the server's defaults (`tools` is left out of the run); a saved one is sent as `tools`, minus any tool
 * the catalog no longer offers.
 */

import type { Tool } from "../api/client";

const PREFIX = "pa:tools:";

export function choiceKey(chatId: string): string {
  return PREFIX + chatId;
}

/** The saved names for `chatId`, or null (the defaults). */
export function loadChoice(store: Storage | null, chatId: string): string[] | null {
  const raw = store?.getItem(choiceKey(chatId));
  if (!raw) return null;
  try {
    const names: unknown = JSON.parse(raw);
    return Array.isArray(names) && names.every((n) => typeof n === "string") ? names : null;
  } catch {
    return null;
  }
}

export function saveChoice(store: Storage | null, chatId: string, names: string[] | null): void {
  if (!store) return;
  if (names === null) store.removeItem(choiceKey(chatId));
  else store.setItem(choiceKey(chatId), JSON.stringify(names));
}

/** What is ticked: the saved names still offered, or the catalog's defaults. */
export function selectedNames(saved: string[] | null, catalog: Tool[]): string[] {
  if (saved === null) return catalog.filter((t) => t.default).map((t) => t.name);
  const offered = new Set(catalog.map((t) => t.name));
  return saved.filter((n) => offered.has(n));
}

/** `saved` with `name` ticked or not (starting from the defaults when nothing was saved yet). */
export function toggled(saved: string[] | null, catalog: Tool[], name: string, on: boolean): string[] {
  const current = selectedNames(saved, catalog).filter((n) => n !== name);
  if (on) current.push(name);
  const order = new Map(catalog.map((t, i) => [t.name, i]));
  return current.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
}

/** The `tools` of `POST /chats/{id}/runs`: null (the defaults) unless this chat has a choice. */
export function toolsForRun(saved: string[] | null, catalog: Tool[]): string[] | null {
  return saved === null ? null : selectedNames(saved, catalog);
}

/** "server · tier 0 · acts" for a tool in the picker. */
/** Where a tool comes from and whether it acts, in plain words ("built in", "from demo · can act"). */
export function toolFacts(tool: Pick<Tool, "server" | "acts">): string {
  return [tool.server ? `from ${tool.server}` : "built in", ...(tool.acts ? ["can act"] : [])].join(" · ");
}
