/** A sent file's bytes, fetched again: the API hands its owner a short-lived presigned GET on the documents bucket
 * (`download_attachment`), which the page fetches (the CSP's connect-src names the bucket). An image is drawn from
 * the bytes (`ImageThumb`, no URL loaded: img-src stays 'self'); a document is saved as a download. */

import { call } from "../api/client";
import { ApiError } from "../api/http";

/** The image types the chat shows inline (the API serves anything else as a download). */
export const INLINE_IMAGE_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export function isInlineImage(contentType: string | undefined): boolean {
  return INLINE_IMAGE_TYPES.has((contentType ?? "").split(";")[0]!.trim().toLowerCase());
}

/** The file's bytes, from the URL the API signed for someone who may read its chat. */
export async function fetchAttachment(id: string, signal?: AbortSignal): Promise<Blob> {
  const link = await call("download_attachment", { path: { attachment_id: id }, signal });
  return fetchSigned(link.url, signal);
}

/** A shared chat's file, from the URL the API signed for a viewer of the share link (`token`). */
export async function fetchSharedAttachment(token: string, id: string, signal?: AbortSignal): Promise<Blob> {
  const link = await call("download_shared_attachment", { path: { token, attachment_id: id }, signal });
  return fetchSigned(link.url, signal);
}

async function fetchSigned(url: string, signal?: AbortSignal): Promise<Blob> {
  let response: Response;
  try {
    response = await fetch(url, { signal, credentials: "omit" });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, "network_error", "The file could not be fetched. Check your connection and try again.", null);
  }
  if (!response.ok) throw new ApiError(response.status, "download_failed", "The file could not be fetched from storage.", null);
  return response.blob();
}

// Sent images are shown again on every transcript reload: keep the last few, as their bytes never change.
const IMAGES_KEPT = 32;
const images = new Map<string, Promise<Blob>>();

/** A sent image's bytes, fetched once per page while it stays among the last `IMAGES_KEPT` asked for. */
export function sentImage(id: string): Promise<Blob> {
  const kept = images.get(id);
  if (kept) {
    images.delete(id);
    images.set(id, kept);
    return kept;
  }
  const loading = fetchAttachment(id);
  images.set(id, loading);
  loading.catch(() => images.delete(id)); // a failure is retried the next time it is shown
  for (const oldest of images.keys()) {
    if (images.size <= IMAGES_KEPT) break;
    images.delete(oldest);
  }
  return loading;
}

/** Save a sent file under its name (the browser's download), from its bytes (`load`: how they are fetched, by
 * default as the chat's reader): the page never navigates away. */
export async function saveAttachment(id: string, name: string, load: (id: string) => Promise<Blob> = fetchAttachment): Promise<void> {
  const blob = await load(id);
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.rel = "noopener";
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000); // after the download has read it
}
