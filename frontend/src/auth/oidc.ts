/**
 * OIDC authorization code + PKCE with oidc-client-ts. Loaded on demand (dynamic import) only when the
 * API's /config names an issuer, so dev-login deployments never download it.
 */

import { UserManager, WebStorageStateStore } from "oidc-client-ts";

import type { ClientConfig } from "../api/client";

type OidcConfig = NonNullable<ClientConfig["oidc"]>;

let manager: UserManager | null = null;

export function userManager(config: OidcConfig): UserManager {
  if (manager) return manager;
  const origin = window.location.origin;
  manager = new UserManager({
    authority: config.issuer,
    client_id: config.client_id,
    redirect_uri: `${origin}/auth/callback`,
    post_logout_redirect_uri: `${origin}/login`,
    response_type: "code", // PKCE is on by default for the code flow
    scope: "openid profile email",
    extraQueryParams: config.audience ? { audience: config.audience } : {},
    // The user (access + refresh token) and the sign-in state stay in this tab's sessionStorage, never in
    // localStorage: nothing outlives the tab, and tabs do not share a refresh token (docs/security.md).
    userStore: new WebStorageStateStore({ store: window.sessionStorage }),
    stateStore: new WebStorageStateStore({ store: window.sessionStorage }),
    automaticSilentRenew: true,
    loadUserInfo: false,
  });
  return manager;
}

export async function currentToken(config: OidcConfig): Promise<string | null> {
  const user = await userManager(config).getUser();
  if (!user || user.expired) return null;
  return user.access_token || user.id_token || null;
}

export async function signIn(config: OidcConfig, returnTo: string): Promise<void> {
  await userManager(config).signinRedirect({ state: { returnTo } });
}

/** Finish the redirect: returns the path to go back to. */
export async function completeSignIn(config: OidcConfig): Promise<string> {
  const user = await userManager(config).signinRedirectCallback();
  const state = user.state as { returnTo?: string } | undefined;
  return state?.returnTo && state.returnTo.startsWith("/") ? state.returnTo : "/";
}

export async function signOut(config: OidcConfig): Promise<void> {
  await userManager(config).removeUser();
}
