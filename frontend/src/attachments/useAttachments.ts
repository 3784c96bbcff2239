/**
 * The files waiting in a chat's composer: each is registered with the API and uploaded at once (its chip shows
 * the progress); the message carries the ids of those that finished. Removing a chip deletes the file.
 */

import { computed, ref, type Ref, watch } from "vue";

import { describeError } from "../api/http";
import { call } from "../api/client";
import { uploadFile } from "./upload";

export interface PendingFile {
  key: string;
  name: string;
  size: number;
  contentType: string;
  id: string | null;
  progress: number;
  state: "uploading" | "ready" | "failed";
  error: string | null;
  abort: AbortController;
  /** The file itself, for an image's thumbnail (drawn on a canvas: nothing is loaded by URL). */
  file?: File;
}

let counter = 0;

/** The type a browser reports, or one guessed from the name (some browsers leave Markdown untyped). */
function typeOf(file: File): string {
  if (/\.csv$/i.test(file.name)) return "text/csv"; // Windows browsers call it an Excel sheet
  if (file.type) return file.type;
  if (/\.(md|markdown)$/i.test(file.name)) return "text/markdown";
  if (/\.txt$/i.test(file.name)) return "text/plain";
  if (/\.eml$/i.test(file.name)) return "message/rfc822";
  return "application/octet-stream";
}

export function useAttachments(chatId: Ref<string>) {
  const files = ref<PendingFile[]>([]);
  const uploading = computed(() => files.value.some((f) => f.state === "uploading"));
  const readyIds = computed(() => files.value.filter((f) => f.state === "ready" && f.id).map((f) => f.id!));

  function update(key: string, change: Partial<PendingFile>): void {
    const index = files.value.findIndex((f) => f.key === key);
    if (index >= 0) files.value[index] = { ...files.value[index]!, ...change };
  }

  async function addOne(file: File): Promise<void> {
    const key = `f${++counter}`;
    const contentType = typeOf(file);
    const abort = new AbortController();
    files.value.push({ key, name: file.name, size: file.size, contentType, id: null, progress: 0, state: "uploading", error: null, abort, file });
    try {
      const created = await call("create_attachment", { path: { chat_id: chatId.value }, body: { filename: file.name, content_type: contentType, size: file.size } });
      update(key, { id: created.id });
      await uploadFile(created.upload, file, (progress) => update(key, { progress }), abort.signal);
      update(key, { state: "ready", progress: 1 });
    } catch (err) {
      if (err instanceof DOMException && err.name === "AbortError") return;
      update(key, { state: "failed", error: describeError(err) });
    }
  }

  function add(list: FileList | File[]): void {
    for (const file of Array.from(list)) void addOne(file);
  }

  async function remove(key: string): Promise<void> {
    const file = files.value.find((f) => f.key === key);
    if (!file) return;
    file.abort.abort();
    files.value = files.value.filter((f) => f.key !== key);
    if (file.id) await call("delete_attachment", { path: { attachment_id: file.id } }).catch(() => undefined);
  }

  /** After the message went: the chips go (the files are the message's now). */
  function clearSent(): void {
    files.value = files.value.filter((f) => f.state !== "ready");
  }

  // Another chat: its composer starts empty (files already uploaded stay unsent, and are never used).
  watch(chatId, () => {
    for (const f of files.value) f.abort.abort();
    files.value = [];
  });

  return { files, uploading, readyIds, add, remove, clearSent };
}
