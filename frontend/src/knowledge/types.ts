/** The knowledge API's types (documents, search, a passage by chunk id), generated from the API. */

import type { components } from "../api/schema";

export type KnowledgeDocument = components["schemas"]["DocumentOut"];
export type DocumentCreated = components["schemas"]["DocumentCreated"];
export type SearchPassage = components["schemas"]["PassageOut"];
export type SearchResults = components["schemas"]["SearchOut"];
export type ChunkPassage = components["schemas"]["ChunkOut"];
export type Classification = components["schemas"]["DocumentIn"]["classification"];
