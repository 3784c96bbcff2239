/**
 * The one way the web chat calls the API: `call(operationId, { path, query, body })`. The method and path come from
 * `operations.ts` and every request and response type from `schema.d.ts`, both generated from the API's checked-in
 * OpenAPI document (`make openapi`), so a renamed route or a changed body fails the type check, not the browser.
 */

import { type Query, request } from "./http";
import { OPERATIONS } from "./operations";
import type { components, operations } from "./schema";

export type OperationId = keyof operations & keyof typeof OPERATIONS;
type JsonOf<T> = T extends { content: { "application/json": infer B } } ? B : never;
/** The JSON body of a successful `Op` (its 200, 201 or 202 response; nothing for a 204). */
export type Ok<Op extends OperationId> = operations[Op]["responses"] extends infer R
  ? R extends { 200: infer X }
    ? JsonOf<X>
    : R extends { 201: infer X }
      ? JsonOf<X>
      : R extends { 202: infer X }
        ? JsonOf<X>
        : R extends { 204: unknown }
          ? void
          : never
  : never;
/** The JSON request body of `Op`. */
export type In<Op extends OperationId> = JsonOf<NonNullable<operations[Op]["requestBody"]>>;
/** The query parameters of `Op`. */
export type QueryOf<Op extends OperationId> = NonNullable<operations[Op]["parameters"]["query"]>;
/** The path parameters of `Op` (`never` when it has none). */
export type PathOf<Op extends OperationId> = operations[Op]["parameters"] extends { path: infer P } ? P : never;

type PathArg<Op extends OperationId> = [PathOf<Op>] extends [never] ? { path?: never } : { path: PathOf<Op> };
type BodyArg<Op extends OperationId> = [In<Op>] extends [never]
  ? { body?: never }
  : undefined extends operations[Op]["requestBody"]
    ? { body?: In<Op> }
    : { body: In<Op> };
export type CallArgs<Op extends OperationId> = PathArg<Op> &
  BodyArg<Op> & { query?: QueryOf<Op>; auth?: boolean; signal?: AbortSignal };
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The arguments of `call(op, …)`: required when the operation has path parameters or a required body. */
type ArgsOf<Op extends OperationId> = [RequiredKeys<CallArgs<Op>>] extends [never] ? [args?: CallArgs<Op>] : [args: CallArgs<Op>];

/** `OPERATIONS[op].path` with its `{name}` parameters filled in from `params`. */
export function operationPath(op: OperationId, params: Record<string, string | number> = {}): string {
  return OPERATIONS[op].path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${op}: the path parameter ${name} is missing`);
    return encodeURIComponent(String(value));
  });
}

/** Call the API's operation `op` (its method and path from the generated table). */
export function call<Op extends OperationId>(op: Op, ...[args]: ArgsOf<Op>): Promise<Ok<Op>> {
  const a = (args ?? {}) as { path?: Record<string, string | number>; query?: Query; body?: unknown; auth?: boolean; signal?: AbortSignal };
  return request<Ok<Op>>(OPERATIONS[op].method, operationPath(op, a.path), {
    body: a.body,
    query: a.query,
    auth: a.auth,
    signal: a.signal,
  });
}

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
