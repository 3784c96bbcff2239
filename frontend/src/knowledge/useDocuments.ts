/** The Knowledge page's documents: loaded from the API, kept current by `document_status` feed announcements
 * (with a slow poll of pending documents in case the feed is down), uploads with progress, delete and re-index. */

import { onBeforeUnmount, onMounted, ref } from "vue";

import { describeError } from "../api/http";
import { uploadFile } from "../attachments/upload";
import { onDocumentStatus, onFeedReconnect } from "../state/feed";
import { applyStatus, contentTypeOf, isPending, upsert } from "./documentStatus";
import { call } from "../api/client";
import { type Classification, type KnowledgeDocument } from "./types";

/** How often documents still in the pipeline are re-read, as a fallback to the feed. */
const POLL_MS = 10_000;

export interface Uploading {
  key: string;
  name: string;
  progress: number;
}

export function useDocuments() {
  const items = ref<KnowledgeDocument[]>([]);
  const uploads = ref<Uploading[]>([]);
  const loaded = ref(false);
  const error = ref<string | null>(null);
  const note = ref<string | null>(null);
  let timer: ReturnType<typeof setInterval> | undefined;

  async function load() {
    try {
      items.value = (await call("list_documents")).items;
      error.value = null;
    } catch (err) {
      error.value = describeError(err);
    } finally {
      loaded.value = true;
    }
  }

  async function poll() {
    for (const d of items.value.filter((i) => isPending(i.status))) {
      try {
        items.value = upsert(items.value, await call("get_document", { path: { document_id: d.id } }));
      } catch {
        /* the next announcement or poll tells */
      }
    }
  }

  const stopStatus = onDocumentStatus((event) => {
    const next = applyStatus(items.value, event);
    if (next.known) items.value = next.items;
    else void load(); // uploaded from another tab: list it
  });
  const stopReconnect = onFeedReconnect(() => void load());
  onMounted(() => {
    void load();
    timer = setInterval(() => void poll(), POLL_MS);
  });
  onBeforeUnmount(() => {
    stopStatus();
    stopReconnect();
    clearInterval(timer);
  });

  /** `collection`: `org`, `personal` or a named collection's id. */
  async function upload(file: File, collection: string, classification: Classification) {
    const entry: Uploading = { key: `${Date.now()}-${file.name}`, name: file.name, progress: 0 };
    uploads.value = [...uploads.value, entry];
    error.value = null;
    note.value = null;
    try {
      const created = await call("create_document", { body: {
        filename: file.name,
        content_type: contentTypeOf(file),
        size: file.size,
        collection,
        classification,
      } });
      items.value = upsert(items.value, created.document);
      await uploadFile(created.upload, file, (fraction) => {
        uploads.value = uploads.value.map((u) => (u.key === entry.key ? { ...u, progress: fraction } : u));
      });
      note.value = `${file.name} uploaded; it is being processed.`;
    } catch (err) {
      error.value = `${file.name}: ${describeError(err)}`;
    } finally {
      uploads.value = uploads.value.filter((u) => u.key !== entry.key);
    }
  }

  async function act(action: () => Promise<unknown>, done: string) {
    error.value = null;
    note.value = null;
    try {
      await action();
      note.value = done;
    } catch (err) {
      error.value = describeError(err);
    }
  }

  const remove = (d: KnowledgeDocument) =>
    act(async () => {
      await call("delete_document", { path: { document_id: d.id } });
      items.value = items.value.filter((i) => i.id !== d.id);
    }, `${d.filename} deleted.`);
  const reindex = (d: KnowledgeDocument) =>
    act(async () => {
      items.value = upsert(items.value, await call("reindex_document", { path: { document_id: d.id } }));
    }, `${d.filename} is being indexed again.`);

  return { items, uploads, loaded, error, note, load, upload, remove, reindex };
}
