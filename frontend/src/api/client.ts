/** The typed API client: one function per route under /api/v1. */

import type * as C from "./contract";
import { type Query, request } from "./http";
import type { ResponseOf } from "./typed";

const V1 = "/api/v1";

type ChatT = ResponseOf<"/api/v1/chats/{chat_id}", "get", C.Chat>;
type ChatPage = ResponseOf<"/api/v1/chats", "get", C.Page<C.Chat>>;
type TranscriptPage = ResponseOf<"/api/v1/chats/{chat_id}/messages", "get", C.Page<C.Message>>;

export const api = {
  config: () => request<ResponseOf<"/api/v1/config", "get", C.ClientConfig>>("GET", `${V1}/config`, { auth: false }),
  devLogin: (body: C.DevLoginRequest) =>
    request<ResponseOf<"/api/v1/dev/login", "post", C.TokenResponse>>("POST", `${V1}/dev/login`, { body, auth: false }),
  me: () => request<ResponseOf<"/api/v1/me", "get", C.Me>>("GET", `${V1}/me`),

  listChats: (query: { limit?: number; cursor?: string | null; q?: string } = {}) =>
    request<ChatPage>("GET", `${V1}/chats`, { query: query as Query }),
  createChat: (title?: string) =>
    request<ResponseOf<"/api/v1/chats", "post", C.Chat>>("POST", `${V1}/chats`, { body: title ? { title } : {} }),
  getChat: (id: string) => request<ChatT>("GET", `${V1}/chats/${encodeURIComponent(id)}`),
  renameChat: (id: string, title: string) =>
    request<ResponseOf<"/api/v1/chats/{chat_id}", "patch", C.Chat>>("PATCH", `${V1}/chats/${encodeURIComponent(id)}`, {
      body: { title },
    }),
  deleteChat: (id: string) => request<void>("DELETE", `${V1}/chats/${encodeURIComponent(id)}`),
  /** A page of the transcript: the newest without `cursor`, else the items before it (`next_cursor` of the newer page). */
  listMessages: (chatId: string, query: { cursor?: string | null; limit?: number } = {}) =>
    request<TranscriptPage>("GET", `${V1}/chats/${encodeURIComponent(chatId)}/messages`, { query }),

  startRun: (chatId: string, body: C.StartRunRequest) =>
    request<ResponseOf<"/api/v1/chats/{chat_id}/runs", "post", C.RunStarted>>(
      "POST",
      `${V1}/chats/${encodeURIComponent(chatId)}/runs`,
      { body },
    ),
  getRun: (runId: string) => request<ResponseOf<"/api/v1/runs/{run_id}", "get", C.Run>>("GET", `${V1}/runs/${encodeURIComponent(runId)}`),
  cancelRun: (runId: string) => request<unknown>("POST", `${V1}/runs/${encodeURIComponent(runId)}/cancel`),

  listModels: () => request<ResponseOf<"/api/v1/models", "get", C.Page<C.Model>>>("GET", `${V1}/models`),

  listApprovals: (status: "pending" | "approved" | "denied" | "expired" = "pending") =>
    request<ResponseOf<"/api/v1/approvals", "get", C.Page<C.Approval>>>("GET", `${V1}/approvals`, { query: { status } }),
  decideApproval: (id: string, body: C.ApprovalDecision) =>
    request<unknown>("POST", `${V1}/approvals/${encodeURIComponent(id)}`, { body }),

  usage: (query: { from?: string; to?: string; group_by: C.UsageGroup; scope?: "me" | "org" }) =>
    request<ResponseOf<"/api/v1/usage", "get", C.UsageReport>>("GET", `${V1}/usage`, { query }),

  getSettings: () => request<ResponseOf<"/api/v1/me/settings", "get", C.UserSettings>>("GET", `${V1}/me/settings`),
  putSettings: (body: C.UserSettings) =>
    request<ResponseOf<"/api/v1/me/settings", "put", C.UserSettings>>("PUT", `${V1}/me/settings`, { body }),
  getOrgSettings: () => request<ResponseOf<"/api/v1/admin/settings", "get", C.OrgSettings>>("GET", `${V1}/admin/settings`),
  putOrgSettings: (body: C.OrgSettings) =>
    request<ResponseOf<"/api/v1/admin/settings", "put", C.OrgSettings>>("PUT", `${V1}/admin/settings`, { body }),
  listKeys: () => request<ResponseOf<"/api/v1/keys", "get", C.Page<C.ProviderKey>>>("GET", `${V1}/keys`),
  addKey: (body: C.NewProviderKey) => request<ResponseOf<"/api/v1/keys", "post", C.ProviderKey>>("POST", `${V1}/keys`, { body }),
  deleteKey: (id: string) => request<void>("DELETE", `${V1}/keys/${encodeURIComponent(id)}`),
};

/** The types the UI works with: generated from the OpenAPI schema where it has them, else `contract.ts`. */
type Result<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
export type ClientConfig = Result<typeof api.config>;
export type DevLogin = Result<typeof api.devLogin>;
export type Me = Result<typeof api.me>;
export type Chat = Result<typeof api.getChat>;
/** A transcript item. The route leaves out unset fields, so `truncated` is only sent when true (the generated
 * type, from a field with a default, says it is always there). */
export type Message = Omit<Result<typeof api.listMessages>["items"][number], "truncated"> & { truncated?: boolean };
export type RunStarted = Result<typeof api.startRun>;
export type Run = Result<typeof api.getRun>;
export type Model = Result<typeof api.listModels>["items"][number];
export type Approval = Result<typeof api.listApprovals>["items"][number];
export type UsageReport = Result<typeof api.usage>;
export type ProviderKey = Result<typeof api.listKeys>["items"][number];
export type { RunMode, UsageGroup } from "./contract";
