/** The Knowledge page's named collections and sources: loaded from the API; create a collection, change its
 * members (owners only), delete it; add a source to one, sync it now, delete it. A sync runs in the background, so
 * a source's `last_sync` is read again a few times after "Sync now" (and on the next load). */

import { onBeforeUnmount, onMounted, ref } from "vue";

import { call } from "../api/client";
import { describeError } from "../api/http";
import type { components } from "../api/schema";

export type Collection = components["schemas"]["CollectionOut"];
export type Source = components["schemas"]["SourceOut"];
export type SourceIn = components["schemas"]["SourceIn"];

/** How often a source being synced is read again, and for how long. */
const SYNC_POLL_MS = 1_500;
const SYNC_POLL_TIMES = 40;

/** People typed as "a@x.com, b@y.com" (or user ids), one list. */
export function people(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((p) => p.trim())
    .filter(Boolean);
}

export const mayWrite = (c: Collection) => c.role === "owner" || c.role === "writer";

export function useCollections() {
  const collections = ref<Collection[]>([]);
  const sources = ref<Source[]>([]);
  const error = ref<string | null>(null);
  const note = ref<string | null>(null);
  const timers = new Set<ReturnType<typeof setTimeout>>();

  async function load() {
    try {
      collections.value = (await call("list_collections")).items;
      sources.value = (await call("list_sources")).items;
      error.value = null;
    } catch (err) {
      error.value = describeError(err);
    }
  }
  onMounted(() => void load());
  onBeforeUnmount(() => timers.forEach(clearTimeout));

  async function act(action: () => Promise<unknown>, done: string): Promise<boolean> {
    error.value = null;
    note.value = null;
    try {
      await action();
      note.value = done;
      return true;
    } catch (err) {
      error.value = describeError(err);
      return false;
    }
  }

  const create = (name: string, description: string, writers: string, readers: string) =>
    act(async () => {
      const body = { name, description, writers: people(writers), readers: people(readers) };
      collections.value = [...collections.value, await call("create_collection", { body })];
    }, `Collection ${name} created.`);

  const setMembers = (c: Collection, owners: string, writers: string, readers: string) =>
    act(async () => {
      const body = { owners: people(owners), writers: people(writers), readers: people(readers) };
      const updated = await call("update_collection", { path: { collection_id: c.id }, body });
      collections.value = collections.value.map((x) => (x.id === c.id ? updated : x));
    }, `Members of ${c.name} saved.`);

  const remove = (c: Collection) =>
    act(async () => {
      await call("delete_collection", { path: { collection_id: c.id } });
      collections.value = collections.value.filter((x) => x.id !== c.id);
      sources.value = sources.value.filter((s) => s.collection !== c.id);
    }, `Collection ${c.name} deleted.`);

  function follow(source: Source, times = SYNC_POLL_TIMES) {
    const before = source.last_sync?.at ?? null;
    const timer = setTimeout(async () => {
      timers.delete(timer);
      try {
        const fresh = await call("get_source", { path: { source_id: source.id } });
        sources.value = sources.value.map((s) => (s.id === fresh.id ? fresh : s));
        if ((fresh.last_sync?.at ?? null) === before && times > 1) follow(source, times - 1);
      } catch {
        /* deleted meanwhile, or offline: the next load tells */
      }
    }, SYNC_POLL_MS);
    timers.add(timer);
  }

  const addSource = (body: SourceIn) =>
    act(async () => {
      const created = await call("create_source", { body });
      sources.value = [created, ...sources.value];
      follow(created);
    }, "Source added; its first sync has started.");

  const syncNow = (s: Source) =>
    act(async () => {
      await call("sync_source", { path: { source_id: s.id } });
      follow(s);
    }, "Sync started.");

  const removeSource = (s: Source) =>
    act(async () => {
      await call("delete_source", { path: { source_id: s.id } });
      sources.value = sources.value.filter((x) => x.id !== s.id);
    }, "Source deleted with its documents.");

  return { collections, sources, error, note, load, create, setMembers, remove, addSource, syncNow, removeSource };
}
