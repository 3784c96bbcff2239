/** Uploading a file (an attachment or a knowledge document) straight to the bucket with its presigned POST, with
 * progress. Types generated from the API. */

import { ApiError } from "../api/http";
import type { components } from "../api/schema";

export type AttachmentCreated = components["schemas"]["AttachmentCreated"];
export type SentAttachment = components["schemas"]["TranscriptAttachment"];

/** POST the file to its presigned form (fields first, then `file`), reporting progress from 0 to 1. */
export function uploadFile(
  upload: AttachmentCreated["upload"],
  file: File,
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(upload.fields)) form.append(name, value);
    form.append("file", file);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", upload.url);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve();
      } else reject(new ApiError(xhr.status, "upload_failed", "The file could not be uploaded (the storage refused it).", null));
    };
    xhr.onerror = () => reject(new ApiError(0, "upload_failed", "The file could not be uploaded. Check your connection and try again.", null));
    xhr.onabort = () => reject(new DOMException("aborted", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort());
    xhr.send(form);
  });
}

/** "12 KB", "3.4 MB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
