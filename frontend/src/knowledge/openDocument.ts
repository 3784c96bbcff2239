/**
 * A citation's document, opened from its passage: the API signs a short-lived GET on the documents bucket for whoever
 * may search the document (`download_document`). A PDF comes inline and opens in a new tab at the cited page (the
 * browser's PDF viewer honours `#page=N`); an image opens in a new tab too; anything else is served as a download
 * (the page stays where it is).
 */

import { call, type Ok } from "../api/client";

export type DocumentLink = Ok<"download_document">;

/** Where to open the signed file: at the cited page for an inline PDF. */
export function documentUrl(link: Pick<DocumentLink, "url" | "content_type" | "disposition">, page: number | null): string {
  const pdf = link.disposition === "inline" && link.content_type === "application/pdf";
  return pdf && page && page > 0 ? `${link.url.split("#")[0]}#page=${page}` : link.url;
}

/** What happened: `tab` (a new tab shows it), `download` (the browser saves it), or `blocked` with the URL to follow
 * (the browser refused the new tab). */
export type Opened = { how: "tab" | "download"; link: DocumentLink } | { how: "blocked"; link: DocumentLink; url: string };

export async function openDocument(documentId: string, page: number | null): Promise<Opened> {
  const link = await call("download_document", { path: { document_id: documentId } });
  const url = documentUrl(link, page);
  if (link.disposition === "inline") {
    const tab = window.open(url, "_blank");
    if (!tab) return { how: "blocked", link, url };
    tab.opener = null; // the bucket's page gets no handle on this one
    return { how: "tab", link };
  }
  const anchor = document.createElement("a");
  anchor.href = url;
  anchor.rel = "noopener";
  anchor.hidden = true;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  return { how: "download", link };
}
