/**
 * The typed API client: one function per route under /api/v1. Every request and response type comes from
 * `schema.d.ts`, generated from the API's checked-in OpenAPI document (`make openapi`), by operation id.
 */

import { type Query, request } from "./http";
import type { components, operations } from "./schema";

const V1 = "/api/v1";

export type OperationId = keyof operations;
type JsonOf<T> = T extends { content: { "application/json": infer B } } ? B : never;
/** The JSON body of a successful `Op` (its 200, 201 or 202 response). */
export type Ok<Op extends OperationId> = operations[Op]["responses"] extends infer R
  ? R extends { 200: infer X }
    ? JsonOf<X>
    : R extends { 201: infer X }
      ? JsonOf<X>
      : R extends { 202: infer X }
        ? JsonOf<X>
        : never
  : never;
/** The JSON request body of `Op`. */
export type In<Op extends OperationId> = JsonOf<NonNullable<operations[Op]["requestBody"]>>;
/** The query parameters of `Op`. */
export type QueryOf<Op extends OperationId> = NonNullable<operations[Op]["parameters"]["query"]>;

const path = (id: string) => encodeURIComponent(id);

export const api = {
  config: () => request<Ok<"client_config">>("GET", `${V1}/config`, { auth: false }),
  devLogin: (body: In<"dev_login">) => request<Ok<"dev_login">>("POST", `${V1}/dev/login`, { body, auth: false }),
  me: () => request<Ok<"get_me">>("GET", `${V1}/me`),

  listChats: (query: QueryOf<"list_chats"> = {}) => request<Ok<"list_chats">>("GET", `${V1}/chats`, { query }),
  createChat: (title?: string) =>
    request<Ok<"create_chat">>("POST", `${V1}/chats`, { body: (title ? { title } : {}) satisfies In<"create_chat"> }),
  getChat: (id: string) => request<Ok<"get_chat">>("GET", `${V1}/chats/${path(id)}`),
  renameChat: (id: string, title: string) =>
    request<Ok<"rename_chat">>("PATCH", `${V1}/chats/${path(id)}`, { body: { title } satisfies In<"rename_chat"> }),
  deleteChat: (id: string) => request<void>("DELETE", `${V1}/chats/${path(id)}`),
  /** A page of the transcript: the newest without `cursor`, else the items before it (`next_cursor` of the newer page). */
  listMessages: (chatId: string, query: QueryOf<"chat_transcript"> = {}) =>
    request<Ok<"chat_transcript">>("GET", `${V1}/chats/${path(chatId)}/messages`, { query }),

  startRun: (chatId: string, body: In<"start_run">) =>
    request<Ok<"start_run">>("POST", `${V1}/chats/${path(chatId)}/runs`, { body }),
  getRun: (runId: string) => request<Ok<"get_run">>("GET", `${V1}/runs/${path(runId)}`),
  cancelRun: (runId: string) => request<Ok<"cancel_run">>("POST", `${V1}/runs/${path(runId)}/cancel`),

  listModels: () => request<Ok<"list_models">>("GET", `${V1}/models`),

  listApprovals: (status: NonNullable<QueryOf<"list_approvals">["status"]> = "pending") =>
    request<Ok<"list_approvals">>("GET", `${V1}/approvals`, { query: { status } }),
  decideApproval: (id: string, body: In<"decide_approval">) =>
    request<Ok<"decide_approval">>("POST", `${V1}/approvals/${path(id)}`, { body }),

  usage: (query: QueryOf<"get_usage">) => request<Ok<"get_usage">>("GET", `${V1}/usage`, { query }),

  getSettings: () => request<Ok<"get_my_settings">>("GET", `${V1}/me/settings`),
  putSettings: (body: In<"put_my_settings">) => request<Ok<"put_my_settings">>("PUT", `${V1}/me/settings`, { body }),
  getOrgSettings: () => request<Ok<"get_org_settings">>("GET", `${V1}/admin/settings`),
  putOrgSettings: (body: In<"put_org_settings">) =>
    request<Ok<"put_org_settings">>("PUT", `${V1}/admin/settings`, { body }),
  listKeys: () => request<Ok<"list_keys">>("GET", `${V1}/keys`),
  addKey: (body: In<"create_key">) => request<Ok<"create_key">>("POST", `${V1}/keys`, { body }),
  deleteKey: (id: string) => request<void>("DELETE", `${V1}/keys/${path(id)}`),

  listTools: () => request<Ok<"list_tools">>("GET", `${V1}/tools`),
  listMcpServers: () => request<Ok<"list_mcp_servers">>("GET", `${V1}/admin/mcp-servers`),
  createMcpServer: (body: In<"create_mcp_server">) =>
    request<Ok<"create_mcp_server">>("POST", `${V1}/admin/mcp-servers`, { body }),
  updateMcpServer: (id: string, body: In<"update_mcp_server">) =>
    request<Ok<"update_mcp_server">>("PATCH", `${V1}/admin/mcp-servers/${path(id)}`, { body }),
  deleteMcpServer: (id: string) => request<void>("DELETE", `${V1}/admin/mcp-servers/${path(id)}`),
  /** Connect to the server now (`refresh`), or reuse a discovery younger than five minutes. */
  discoverMcpTools: (id: string, refresh = true) =>
    request<Ok<"discover_mcp_server_tools">>("GET", `${V1}/admin/mcp-servers/${path(id)}/tools`, { query: { refresh } }),
};

// Compile-time guard: `never` (an operation id or status the schema lacks) or a free-form object would
// type-check anything the UI does with it, so every function must resolve to a real generated type.
type Loose<T> = [T] extends [never] ? true : unknown extends T ? true : string extends keyof T ? true : false;
type LooseFunctions = {
  [K in keyof typeof api]: Loose<Awaited<ReturnType<(typeof api)[K]>>> extends true ? K : never;
}[keyof typeof api];
const everyResponseIsTyped: [LooseFunctions] extends [never] ? true : LooseFunctions = true;
void everyResponseIsTyped;

/** The types the UI works with, all generated. */
type Schemas = components["schemas"];
export type ClientConfig = Schemas["ClientConfig"];
export type DevLogin = Schemas["DevLoginOut"];
export type DevLoginRole = NonNullable<Schemas["DevLoginIn"]["role"]>;
export type Me = Schemas["MeOut"];
export type Chat = Schemas["Chat"];
/** A transcript item; the route sends only the fields a part has (`truncated` only when true). */
export type Message = Schemas["TranscriptItem"];
export type RunMode = NonNullable<Schemas["RunCreate"]["mode"]>;
export type RunStarted = Schemas["RunAccepted"];
export type Run = Schemas["RunView"];
export type Model = Schemas["ModelOut"];
export type Approval = Schemas["Approval"];
export type UsageReport = Schemas["UsageReport"];
export type UsageGroup = UsageReport["group_by"];
export type OrgSettings = Schemas["OrgSettings"];
export type ProviderKey = Schemas["ProviderKeyOut"];
export type Tool = Schemas["ToolOut"];
export type RunTool = Schemas["RunToolOut"];
export type McpServer = Schemas["McpServerOut"];
export type McpServerIn = Schemas["McpServerIn"];
export type McpDiscovery = Schemas["McpDiscovery"];
export type McpTool = Schemas["McpToolOut"];
export type ToolPolicy = Schemas["ToolPolicy"];
export type ApprovalPolicy = McpTool["approval"];
export type { Query };
