import { describe, expect, it } from "vitest";

import type { McpDiscovery } from "../api/client";
import { allowListFrom, allowListText, emptyForm, headersFrom, newServerBody, policiesFrom, serverStatus, tierLabel } from "./mcpForm";

describe("the MCP server form", () => {
  it("sends a filled-in form as the API's body, blank header rows left out", () => {
    const form = { ...emptyForm(), name: "crm", url: " https://mcp.example.com/mcp ", tier: 1, allowList: "lookup, lookup,  update" };
    form.headers = [
      { name: "Authorization", value: "Bearer s3cret" },
      { name: "", value: "" },
    ];
    expect(newServerBody(form)).toEqual({
      ok: true,
      value: {
        name: "crm",
        url: "https://mcp.example.com/mcp",
        transport: "http",
        trust_tier: 1,
        headers: { Authorization: "Bearer s3cret" },
        allowed_tools: ["lookup", "update"],
      },
    });
  });

  it("sends no headers and no allow-list when none is given", () => {
    const body = newServerBody({ ...emptyForm(), name: "demo", url: "http://127.0.0.1:9/mcp" });
    expect(body.ok && [body.value.headers, body.value.allowed_tools, body.value.trust_tier]).toEqual([null, null, 0]);
  });

  it("says what is wrong before sending", () => {
    const bad = (patch: object) => newServerBody({ ...emptyForm(), name: "ok", url: "https://x/mcp", ...patch });
    expect(bad({ name: "Bad_Name" })).toMatchObject({ ok: false, error: expect.stringContaining("Name") });
    expect(bad({ url: "ftp://x" })).toMatchObject({ ok: false, error: expect.stringContaining("URL") });
    expect(bad({ tier: 3 })).toMatchObject({ ok: false, error: expect.stringContaining("tier") });
    expect(headersFrom([{ name: "X Token", value: "v" }])).toMatchObject({ ok: false });
    expect(headersFrom([{ name: "X-Token", value: "" }])).toMatchObject({ ok: false, error: "Header X-Token has no value." });
    expect(headersFrom([{ name: "X-Token", value: "a\nb" }])).toMatchObject({ ok: false });
    expect(
      headersFrom([
        { name: "X-Token", value: "a" },
        { name: "x-token", value: "b" },
      ]),
    ).toMatchObject({ ok: false, error: "Header x-token is there twice." });
  });

  it("reads and writes the allow-list", () => {
    expect(allowListFrom(" ")).toBeNull();
    expect(allowListFrom("a,b c")).toEqual(["a", "b", "c"]);
    expect(allowListText(null)).toBe("");
    expect(allowListText(["a", "b"])).toBe("a, b");
  });

  it("keys policies by the tool's name on its server", () => {
    const tools = [
      { remote_name: "weather", acts: false, approval: "never" as const },
      { remote_name: "post_note", acts: true, approval: "always" as const },
    ];
    expect(policiesFrom(tools)).toEqual({ weather: { acts: false, approval: "never" }, post_note: { acts: true, approval: "always" } });
  });

  it("tells a server's state", () => {
    const found = (reachable: boolean, tools: number, error: string | null = null) =>
      ({ server_id: "s", reachable, error, tools: Array.from({ length: tools }, () => ({})) }) as McpDiscovery;
    expect(serverStatus(null)).toEqual({ text: "not tested", tone: "unknown" });
    expect(serverStatus(found(true, 2))).toEqual({ text: "reachable · 2 tools", tone: "ok" });
    expect(serverStatus(found(true, 1)).text).toBe("reachable · 1 tool");
    expect(serverStatus(found(false, 0, "connection refused"))).toEqual({ text: "down: connection refused", tone: "down" });
    expect(serverStatus(found(true, 2), false).text).toBe("disabled");
    expect(tierLabel(0)).toBe("0 · untrusted");
  });
});
