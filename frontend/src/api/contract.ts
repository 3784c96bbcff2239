/**
 * The API contract typed by hand — the one place for it. `client.ts` uses these types only for a
 * route (or a response) that the generated `schema.d.ts` does not describe yet; once the backend's
 * OpenAPI document has the route, `npm run gen:api` makes the generated type win (see `typed.ts`).
 */

export interface ClientConfig {
  oidc: { issuer: string; client_id: string; audience?: string | null; scope?: string | null } | null;
  dev_login: boolean;
  environment: string;
}

export interface DevLoginRequest {
  org: string;
  user: string;
  role: string;
}

export interface TokenResponse {
  token: string;
}

export interface Me {
  user_id: string;
  org_id: string;
  org: string;
  roles: string[];
  email?: string | null;
}

export interface Chat {
  id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
}

export interface Page<T> {
  items: T[];
  next_cursor?: string | null;
}

export interface ToolCall {
  id: string;
  name: string;
  args: unknown;
}

export interface Message {
  id: string;
  role: "user" | "assistant" | "tool" | string;
  text?: string | null;
  tool_calls?: ToolCall[] | null;
  tool_call_id?: string | null;
  content?: unknown;
  run_id?: string | null;
  created_at?: string | null;
  truncated?: boolean;
}

export type RunMode = "inline" | "durable" | "auto";

export interface StartRunRequest {
  message: string;
  model?: string;
  mode?: RunMode;
}

export interface RunStarted {
  run_id: string;
  events_url: string;
  status_url?: string;
  mode: string;
}

export interface Run {
  id: string;
  status: string;
  mode?: string | null;
  model?: string | null;
  chat_id?: string | null;
}

export interface Model {
  id: string;
  label: string;
  provider?: string | null;
  offline_demo?: boolean;
}

export interface Approval {
  id: string;
  run_id: string;
  chat_id?: string | null;
  tool: string;
  args: unknown;
  expires_at?: string | null;
  status: string;
}

export interface ApprovalDecision {
  decision: "approve" | "deny";
  reason?: string;
  arguments?: unknown;
}

export type UsageGroup = "day" | "model" | "chat" | "user";

export interface UsageRow {
  key: string;
  cost_usd: number | null;
  input_tokens: number;
  output_tokens: number;
  requests: number;
}

export interface UsageReport {
  items: UsageRow[];
  total_cost_usd: number | null;
}

export interface UserSettings {
  default_model: string | null;
}

/** Org-wide settings (org admins); PUT replaces them all, so the client merges before it writes. */
export interface OrgSettings {
  tier_floor: number;
  confidence_threshold: number;
  routing_model: string | null;
  default_model: string | null;
}

export interface ProviderKey {
  id: string;
  provider: string;
  label: string;
  hint: string;
}

export interface NewProviderKey {
  provider: string;
  label: string;
  key: string;
}

export interface ApiErrorBody {
  code: string;
  message: string;
  request_id?: string;
}
