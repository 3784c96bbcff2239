// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from "vitest";

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
}

function fakeApi(token: string): typeof fetch {
  return vi.fn(async (input: RequestInfo | URL) => {
    const url = String(input);
    if (url.endsWith("/api/v1/dev/login")) return json({ access_token: token, token_type: "bearer" });
    if (url.endsWith("/api/v1/me")) return json({ user: { id: "u1" }, org: { slug: "acme" }, roles: ["admin"] });
    return new Response("{}", { status: 404 });
  }) as unknown as typeof fetch;
}

afterEach(() => {
  localStorage.clear();
  sessionStorage.clear();
  vi.unstubAllGlobals();
  vi.resetModules();
});

describe("where tokens live", () => {
  it("keeps the dev-login token in this tab's sessionStorage, never in localStorage", async () => {
    vi.stubGlobal("fetch", fakeApi("dev-token-1"));
    const { devLogin, currentToken, logout } = await import("./session");
    await devLogin("acme", "alice", "admin");
    expect(sessionStorage.getItem("pa.devToken")).toBe("dev-token-1");
    expect(Object.keys(localStorage)).toEqual([]);
    expect(await currentToken()).toBe("dev-token-1");
    await logout();
    expect(sessionStorage.getItem("pa.devToken")).toBeNull();
  });

  it("removes tokens an earlier version left in localStorage and keeps everything else", async () => {
    localStorage.setItem("pa.devToken", "old");
    localStorage.setItem("oidc.user:https://idp.test:web", '{"refresh_token":"r"}');
    localStorage.setItem("pa.defaultModel", "auto");
    await import("./session");
    expect(Object.keys(localStorage)).toEqual(["pa.defaultModel"]);
  });

  it("stores the OIDC user (access and refresh token) in sessionStorage", async () => {
    const { User } = await import("oidc-client-ts");
    const { userManager } = await import("./oidc");
    const manager = userManager({ issuer: "https://idp.test", client_id: "web", audience: null });
    await manager.storeUser(
      new User({ access_token: "at", refresh_token: "rt", token_type: "Bearer", profile: { sub: "s" } as never }),
    );
    expect(Object.keys(sessionStorage).some((k) => k.startsWith("oidc.user:") && sessionStorage[k]!.includes('"rt"'))).toBe(
      true,
    );
    expect(Object.keys(localStorage)).toEqual([]);
  });
});
