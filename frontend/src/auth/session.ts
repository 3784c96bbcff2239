/**
 * Who is signed in. The API client asks here for the bearer token.
 *
 * Tokens live in this tab's sessionStorage, never in localStorage (docs/security.md): a dev-login token
 * (local mode) here, an OIDC user (access and refresh token) through oidc-client-ts (loaded lazily).
 * sessionStorage survives a reload (a stream resumes) but not the tab, is not shared with other tabs
 * (each signs in; with OIDC the IdP's session makes that one redirect) and is not left on disk when
 * the browser closes. Sharing a refresh token between tabs would also break IdPs that rotate them.
 */

import { reactive } from "vue";

import { call } from "../api/client";
import type { ClientConfig, DevLoginRole, Me } from "../api/client";
import { setTokenProvider, setUnauthorizedHandler } from "../api/http";

const DEV_TOKEN_KEY = "pa.devToken";
/** Where earlier versions kept tokens (localStorage): cleared on load so none is left behind on disk. */
const LEGACY_KEY = /^(pa\.devToken$|oidc\.)/;

function forgetLegacyTokens(): void {
  try {
    for (const key of Object.keys(localStorage)) if (LEGACY_KEY.test(key)) localStorage.removeItem(key);
  } catch {
    // storage disabled: nothing was kept there either
  }
}
forgetLegacyTokens();

export const session = reactive({
  config: null as ClientConfig | null,
  configError: null as string | null,
  me: null as Me | null,
  ready: false,
});

let oidcModule: Promise<typeof import("./oidc")> | null = null;
function oidc(): Promise<typeof import("./oidc")> {
  oidcModule ??= import("./oidc");
  return oidcModule;
}

function tokenExpired(token: string): boolean {
  try {
    const part = token.split(".")[1];
    if (!part) return false;
    const payload = JSON.parse(atob(part.replace(/-/g, "+").replace(/_/g, "/"))) as { exp?: number };
    return typeof payload.exp === "number" && payload.exp * 1000 < Date.now();
  } catch {
    return false; // not a JWT (a personal access token): the API decides
  }
}

function devToken(): string | null {
  const token = sessionStorage.getItem(DEV_TOKEN_KEY);
  if (token && tokenExpired(token)) {
    sessionStorage.removeItem(DEV_TOKEN_KEY);
    return null;
  }
  return token;
}

export async function currentToken(): Promise<string | null> {
  const dev = devToken();
  if (dev) return dev;
  const issuer = session.config?.oidc;
  if (issuer) return (await oidc()).currentToken(issuer);
  return null;
}

let unauthorizedListener: (() => void) | null = null;

/** Called by the router: where to send people whose token was refused. */
export function onSignedOut(listener: () => void): void {
  unauthorizedListener = listener;
}

setTokenProvider(currentToken);
setUnauthorizedHandler(() => {
  sessionStorage.removeItem(DEV_TOKEN_KEY);
  session.me = null;
  unauthorizedListener?.();
});

/** Load /config and, when there is a token, /me. Safe to call more than once. */
export async function initSession(): Promise<void> {
  if (session.ready) return;
  try {
    session.config = await call("client_config", { auth: false });
    session.configError = null;
  } catch (err) {
    // Without /config we still offer the dev login; the API refuses it outside local mode.
    session.config = { oidc: null, dev_login: true, environment: "local" };
    session.configError = err instanceof Error ? err.message : String(err);
  }
  if (await currentToken()) {
    try {
      session.me = await call("get_me");
    } catch {
      session.me = null;
    }
  }
  session.ready = true;
}

export async function devLogin(org: string, user: string, role: DevLoginRole): Promise<void> {
  const { access_token: token } = await call("dev_login", { body: { org, user, role }, auth: false });
  sessionStorage.setItem(DEV_TOKEN_KEY, token);
  session.me = await call("get_me");
}

export async function oidcLogin(returnTo: string): Promise<void> {
  const issuer = session.config?.oidc;
  if (!issuer) throw new Error("single sign-on is not configured");
  await (await oidc()).signIn(issuer, returnTo);
}

export async function completeOidcLogin(): Promise<string> {
  const issuer = session.config?.oidc;
  if (!issuer) throw new Error("single sign-on is not configured");
  const returnTo = await (await oidc()).completeSignIn(issuer);
  session.me = await call("get_me");
  return returnTo;
}

export async function logout(): Promise<void> {
  sessionStorage.removeItem(DEV_TOKEN_KEY);
  const issuer = session.config?.oidc;
  if (issuer) await (await oidc()).signOut(issuer);
  session.me = null;
}

export function isAdmin(): boolean {
  const roles = session.me?.roles ?? [];
  return roles.includes("admin") || roles.includes("org-admin");
}
