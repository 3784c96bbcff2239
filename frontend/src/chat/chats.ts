/** The chat list (sidebar): search, paging, create, rename, delete. */

import { reactive } from "vue";

import { call } from "../api/client";
import type { Chat } from "../api/client";
import { describeError } from "../api/http";
import { projects } from "../projects/projects";

export const chats = reactive({
  items: [] as Chat[],
  nextCursor: null as string | null,
  query: "",
  loading: false,
  error: null as string | null,
});

let generation = 0;

export async function loadChats(more = false): Promise<void> {
  const mine = ++generation;
  chats.loading = true;
  chats.error = null;
  try {
    const query = { limit: 30, q: chats.query.trim() || undefined, cursor: more ? chats.nextCursor : undefined };
    const page = await call("list_chats", { query: { ...query, project_id: projects.filter ?? undefined } });
    if (mine !== generation) return; // a newer search answered first
    chats.items = more ? [...chats.items, ...page.items] : page.items;
    chats.nextCursor = page.next_cursor ?? null;
  } catch (err) {
    if (mine === generation) chats.error = describeError(err);
  } finally {
    if (mine === generation) chats.loading = false;
  }
}

/** `agent`: the slug of the agent the chat is bound to (none: the built-in assistant); `temporary`: a chat never
 * listed and deleted after the org's set time (so it is not added to the list either). */
export async function createChat(title?: string, agent?: string, temporary = false): Promise<Chat> {
  const body = { ...(title ? { title } : {}), ...(agent ? { agent } : {}), ...(temporary ? { temporary } : {}) };
  const chat = await call("create_chat", { body });
  if (!temporary) chats.items = [chat, ...chats.items.filter((c) => c.id !== chat.id)];
  return chat;
}

export async function renameChat(id: string, title: string): Promise<void> {
  const chat = await call("rename_chat", { path: { chat_id: id }, body: { title } });
  chats.items = chats.items.map((c) => (c.id === id ? { ...c, ...chat } : c));
}

export async function deleteChat(id: string): Promise<void> {
  await call("delete_chat", { path: { chat_id: id } });
  chats.items = chats.items.filter((c) => c.id !== id);
}

/** Bring a chat to the top after activity (a run started or finished in it); the chat as it is now (null: gone). */
export async function refreshChat(id: string): Promise<Chat | null> {
  try {
    const chat = await call("get_chat", { path: { chat_id: id } });
    const listed = !chat.temporary_until && (!chats.query || chats.items.some((c) => c.id === id)); // a temporary chat never is
    if (listed) chats.items = [chat, ...chats.items.filter((c) => c.id !== id)];
    return chat;
  } catch {
    return null; // deleted meanwhile, or not ours: nothing to show
  }
}

export function chatTitle(chat: Pick<Chat, "title"> | null | undefined): string {
  return chat?.title?.trim() || "New chat";
}
