/** `/api/v1/me/memories`: what the agent remembers about the signed-in person (types generated from the API). */

import { request } from "../api/http";
import type { components } from "../api/schema";

export type Memory = components["schemas"]["Memory"];
export type MemoryList = components["schemas"]["MemoryList"];
type MemoryIn = components["schemas"]["MemoryIn"];

const BASE = "/api/v1/me/memories";
const path = (id: string) => `${BASE}/${encodeURIComponent(id)}`;

export const memoriesApi = {
  list: () => request<MemoryList>("GET", BASE),
  create: (text: string) => request<Memory>("POST", BASE, { body: { text } satisfies MemoryIn }),
  update: (id: string, text: string) => request<Memory>("PATCH", path(id), { body: { text } satisfies MemoryIn }),
  remove: (id: string) => request<void>("DELETE", path(id)),
};
