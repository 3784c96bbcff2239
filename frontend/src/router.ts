/** Routes. Every page is its own chunk, so the first load is the shell plus one page. */

import { createRouter, createWebHistory } from "vue-router";

import { initSession, onSignedOut, session } from "./auth/session";

declare module "vue-router" {
  interface RouteMeta {
    public?: boolean;
    title?: string;
  }
}

export const router = createRouter({
  history: createWebHistory(),
  routes: [
    { path: "/login", component: () => import("./views/LoginView.vue"), meta: { public: true, title: "Sign in" } },
    { path: "/auth/callback", component: () => import("./views/AuthCallbackView.vue"), meta: { public: true, title: "Signing in" } },
    { path: "/", component: () => import("./views/ChatsView.vue"), meta: { title: "Chats" } },
    { path: "/chats/:id", component: () => import("./views/ChatsView.vue"), meta: { title: "Chat" } },
    { path: "/approvals", component: () => import("./views/ApprovalsView.vue"), meta: { title: "Approvals" } },
    { path: "/usage", component: () => import("./views/UsageView.vue"), meta: { title: "Usage" } },
    { path: "/settings", component: () => import("./views/SettingsView.vue"), meta: { title: "Settings" } },
    { path: "/:rest(.*)*", component: () => import("./views/NotFoundView.vue"), meta: { public: true, title: "Not found" } },
  ],
});

router.beforeEach(async (to) => {
  // Fetch the page's chunk while the session loads, instead of after it (the router would load it next).
  for (const record of to.matched) {
    const view = record.components?.default;
    if (typeof view === "function") void (view as () => Promise<unknown>)();
  }
  await initSession();
  if (to.meta.public) {
    if (to.path === "/login" && session.me) return typeof to.query.next === "string" ? to.query.next : "/";
    return true;
  }
  if (!session.me) return { path: "/login", query: to.fullPath !== "/" ? { next: to.fullPath } : {} };
  return true;
});

router.afterEach((to) => {
  document.title = to.meta.title ? `${to.meta.title} · Personal Agent` : "Personal Agent";
});

onSignedOut(() => {
  const current = router.currentRoute.value;
  if (!current.meta.public) void router.push({ path: "/login", query: { next: current.fullPath } });
});
