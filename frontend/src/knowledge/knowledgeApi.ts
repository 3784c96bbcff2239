/** `/api/v1/knowledge`: documents (register → presigned upload, list, status, delete, re-index), search, and one
 * passage by chunk id (a citation's source). Types generated from the API. */

import { request } from "../api/http";
import type { components } from "../api/schema";

export type KnowledgeDocument = components["schemas"]["DocumentOut"];
export type DocumentCreated = components["schemas"]["DocumentCreated"];
export type SearchPassage = components["schemas"]["PassageOut"];
export type SearchResults = components["schemas"]["SearchOut"];
export type ChunkPassage = components["schemas"]["ChunkOut"];
type DocumentIn = components["schemas"]["DocumentIn"];
export type Classification = DocumentIn["classification"];

const BASE = "/api/v1/knowledge";
const doc = (id: string) => `${BASE}/documents/${encodeURIComponent(id)}`;

export const knowledgeApi = {
  list: () => request<components["schemas"]["DocumentList"]>("GET", `${BASE}/documents`),
  get: (id: string) => request<KnowledgeDocument>("GET", doc(id)),
  create: (body: DocumentIn) => request<DocumentCreated>("POST", `${BASE}/documents`, { body }),
  remove: (id: string) => request<void>("DELETE", doc(id)),
  reindex: (id: string) => request<KnowledgeDocument>("POST", `${doc(id)}/reindex`),
  search: (q: string, k = 8) => request<SearchResults>("GET", `${BASE}/search`, { query: { q, k } }),
  chunk: (chunkId: string) => request<ChunkPassage>("GET", `${BASE}/chunks/${encodeURIComponent(chunkId)}`),
};
