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
    { path: "/", component: () => import("./chat/ChatsView.vue"), meta: { title: "Chats" } },
    { path: "/chats/:id", component: () => import("./chat/ChatsView.vue"), meta: { title: "Chat" } },
    // A shared chat (issue 38): public, since a public link opens without signing in (the API decides who sees it).
    { path: "/s/:token", component: () => import("./sharing/SharedChatView.vue"), meta: { public: true, title: "Shared chat" } },
    { path: "/agents", component: () => import("./agents/AgentsView.vue"), meta: { title: "Agents" } },
    { path: "/agents/new", component: () => import("./agents/AgentEditor.vue"), meta: { title: "New agent" } },
    { path: "/agents/:id", component: () => import("./agents/AgentEditor.vue"), meta: { title: "Agent" } },
    { path: "/projects", component: () => import("./projects/ProjectsView.vue"), meta: { title: "Projects" } },
    { path: "/projects/:id", component: () => import("./projects/ProjectsView.vue"), meta: { title: "Project" } },
    { path: "/approvals", component: () => import("./approvals/ApprovalsView.vue"), meta: { title: "Approvals" } },
    { path: "/knowledge", component: () => import("./views/KnowledgeView.vue"), meta: { title: "Knowledge" } },
    { path: "/usage", component: () => import("./views/UsageView.vue"), meta: { title: "Usage" } },
    { path: "/settings", component: () => import("./views/SettingsView.vue"), meta: { title: "Settings" } },
    { path: "/runs/:id/trace", component: () => import("./evals/RunTraceView.vue"), meta: { title: "Run trace" } },
    {
      path: "/admin",
      component: () => import("./views/admin/AdminLayout.vue"),
      children: [
        { path: "", component: () => import("./views/admin/AdminHome.vue"), meta: { title: "Admin console" } },
        { path: "models", component: () => import("./views/admin/AdminModels.vue"), meta: { title: "Providers and models" } },
        { path: "budgets", component: () => import("./views/admin/AdminBudgets.vue"), meta: { title: "Budgets" } },
        { path: "org", component: () => import("./views/admin/AdminOrg.vue"), meta: { title: "Organisation settings" } },
        { path: "members", component: () => import("./views/admin/AdminMembers.vue"), meta: { title: "Members" } },
        { path: "workflows", component: () => import("./views/admin/AdminWorkflows.vue"), meta: { title: "Workflows" } },
        { path: "audit", component: () => import("./views/admin/AdminAudit.vue"), meta: { title: "Approval audit" } },
        { path: "feedback", component: () => import("./evals/AdminFeedback.vue"), meta: { title: "Feedback" } },
        { path: "evals", component: () => import("./evals/AdminEvals.vue"), meta: { title: "Evaluations" } },
        { path: "tool-policies", component: () => import("./views/admin/AdminToolPolicies.vue"), meta: { title: "Tool policies" } },
      ],
    },
    // `pa login` (the device grant against the dev issuer): the signed-in person approves a terminal's code.
    { path: "/device", component: () => import("./views/DeviceView.vue"), meta: { title: "Sign in a terminal" } },
    { path: "/settings/tools", component: () => import("./tools/ToolsSettingsView.vue"), meta: { title: "Tools & MCP servers" } },
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
