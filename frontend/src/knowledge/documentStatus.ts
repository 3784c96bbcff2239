/** A document list kept current by `document_status` announcements on the user's feed (and by polling a document
 * while the feed is down); what each status reads as. */

import type { FeedEventValue } from "../stream/customEvents";
import type { KnowledgeDocument } from "./types";

export type DocumentStatus = KnowledgeDocument["status"];

/** The value of a `document_status` feed event (generated from knowledge/status_feed.py's model). */
export type DocumentStatusEvent = FeedEventValue<"document_status">;

/** The list with the announced status applied; `known` false when the document is not in it (reload the list). */
export function applyStatus(items: KnowledgeDocument[], event: DocumentStatusEvent): { items: KnowledgeDocument[]; known: boolean } {
  let known = false;
  const next = items.map((d) => {
    if (d.id !== event.document_id) return d;
    known = true;
    return { ...d, status: event.status, error: event.error, chunk_count: event.chunk_count };
  });
  return { items: next, known };
}

/** Replace one document (a fresher copy from the API), keeping the order; added first when new. */
export function upsert(items: KnowledgeDocument[], document: KnowledgeDocument): KnowledgeDocument[] {
  return items.some((d) => d.id === document.id) ? items.map((d) => (d.id === document.id ? document : d)) : [document, ...items];
}

/** True while the pipeline still works on it (the page follows it). */
export function isPending(status: DocumentStatus): boolean {
  return status === "uploading" || status === "processing";
}

export function statusLabel(status: DocumentStatus): string {
  return { uploading: "Uploading", processing: "Processing", ready: "Ready", failed: "Failed" }[status];
}

export function collectionLabel(collection: string): string {
  if (collection === "org") return "Organisation";
  if (collection === "personal") return "Only me";
  return collection.startsWith("chat:") ? "Chat file" : collection;
}

/** The browser's type for a file, or one guessed from its name (browsers often leave `.md` untyped). */
export function contentTypeOf(file: { name: string; type: string }): string {
  const ext = file.name.toLowerCase().split(".").pop() ?? "";
  const byExt: Record<string, string> = {
    md: "text/markdown",
    markdown: "text/markdown",
    txt: "text/plain",
    html: "text/html",
    htm: "text/html",
    pdf: "application/pdf",
    docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    csv: "text/csv",
    xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    eml: "message/rfc822",
    png: "image/png",
    jpg: "image/jpeg",
    jpeg: "image/jpeg",
  };
  // Windows browsers call a CSV file an Excel sheet: the name says what it is.
  if (ext === "csv") return "text/csv";
  if (file.type && file.type !== "application/octet-stream") return file.type;
  return byExt[ext] ?? (file.type || "application/octet-stream");
}
