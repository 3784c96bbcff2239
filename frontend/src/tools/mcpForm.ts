/**
 * The admin form for an org's MCP servers, as plain functions: what the inputs become in the API's bodies
 * (auth headers, the allow-list, per-tool policies) and how a server's state reads. The API checks all of
 * this again; checking here first gives the admin the reason before a round trip.
 */

import type { ApprovalPolicy, McpDiscovery, McpServerIn, McpTool, ToolPolicy } from "../api/client";

export const NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,30}$/;
const HEADER_NAME = /^[A-Za-z0-9-]{1,100}$/;

export const TIERS = [
  { value: 0, label: "0 · untrusted", hint: "outside the organisation: its results make acting tools ask first" },
  { value: 1, label: "1 · regulated", hint: "a provider under contract" },
  { value: 2, label: "2 · internal", hint: "run by the organisation" },
] as const;

export const APPROVALS: { value: ApprovalPolicy; label: string }[] = [
  { value: "never", label: "Never ask" },
  { value: "gate", label: "Ask when unsure (the agent decides from how sure it is)" },
  { value: "always", label: "Always ask" },
];

export function tierLabel(tier: number): string {
  return TIERS.find((t) => t.value === tier)?.label ?? String(tier);
}

/** One auth header row of the form (the value is write-only: it is never read back from the server). */
export interface HeaderRow {
  name: string;
  value: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** The rows as the API's `headers`: null when none is filled in; blank rows are ignored. */
export function headersFrom(rows: HeaderRow[]): Checked<Record<string, string> | null> {
  const headers: Record<string, string> = {};
  for (const row of rows) {
    const name = row.name.trim();
    if (!name && !row.value) continue;
    if (!HEADER_NAME.test(name)) return { ok: false, error: `Header name “${name}”: letters, digits and “-” only.` };
    if (!row.value) return { ok: false, error: `Header ${name} has no value.` };
    if (/[\r\n\0]/.test(row.value) || row.value.length > 8192) {
      return { ok: false, error: `Header ${name}: one line of at most 8192 characters.` };
    }
    if (Object.keys(headers).some((n) => n.toLowerCase() === name.toLowerCase())) {
      return { ok: false, error: `Header ${name} is there twice.` };
    }
    headers[name] = row.value;
  }
  return { ok: true, value: Object.keys(headers).length ? headers : null };
}

/** "a, b" → ["a", "b"]; empty → null (every tool the server lists). */
export function allowListFrom(text: string): string[] | null {
  const names = [...new Set(text.split(/[\s,]+/).map((n) => n.trim()).filter(Boolean))];
  return names.length ? names : null;
}

export function allowListText(names: string[] | null | undefined): string {
  return (names ?? []).join(", ");
}

export interface ServerForm {
  name: string;
  url: string;
  tier: number;
  headers: HeaderRow[];
  allowList: string;
}

export function emptyForm(): ServerForm {
  return { name: "", url: "", tier: 0, headers: [{ name: "", value: "" }], allowList: "" };
}

/** The body of `POST /admin/mcp-servers`, or why the form cannot be sent yet. */
export function newServerBody(form: ServerForm): Checked<McpServerIn> {
  const name = form.name.trim();
  if (!NAME_PATTERN.test(name)) return { ok: false, error: "Name: lower-case letters, digits and “-”, up to 31 characters." };
  const url = form.url.trim();
  if (!/^https?:\/\/\S+$/.test(url)) return { ok: false, error: "URL: the server's streamable-HTTP address (http:// or https://)." };
  if (!TIERS.some((t) => t.value === form.tier)) return { ok: false, error: "Trust tier: 0, 1 or 2." };
  const headers = headersFrom(form.headers);
  if (!headers.ok) return headers;
  return {
    ok: true,
    value: { name, url, transport: "http", trust_tier: form.tier, headers: headers.value, allowed_tools: allowListFrom(form.allowList) },
  };
}

/** Policies keyed by the tool's name on its server, as `PATCH … {tool_policies}` takes them. */
export function policiesFrom(tools: Pick<McpTool, "remote_name" | "acts" | "approval">[]): Record<string, ToolPolicy> {
  return Object.fromEntries(tools.map((t) => [t.remote_name, { acts: t.acts, approval: t.approval }]));
}

/** A server's state in a few words: not tested yet, its tools, or why it is down. */
export function serverStatus(discovery: McpDiscovery | null | undefined, enabled = true): { text: string; tone: "ok" | "down" | "unknown" } {
  if (!enabled) return { text: "disabled", tone: "unknown" };
  if (!discovery) return { text: "not tested", tone: "unknown" };
  if (!discovery.reachable) return { text: `down: ${discovery.error ?? "unreachable"}`, tone: "down" };
  const n = discovery.tools.length;
  return { text: `reachable · ${n} tool${n === 1 ? "" : "s"}`, tone: "ok" };
}
