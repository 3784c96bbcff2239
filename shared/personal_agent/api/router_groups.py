"""The API's routers in the order the app matches them, each with the path prefixes its routes lie under: the
API Lambda imports a group with the first request under one of its prefixes (`fastpaths.lazy_routers`)."""

from __future__ import annotations

from personal_agent.fastpaths.lazy_routers import RouterGroup

GROUPS: tuple[RouterGroup, ...] = (
    RouterGroup("chats", ("/api/v1/chats",)),
    RouterGroup("runs", ("/api/v1/chats", "/api/v1/runs")),
    RouterGroup("usage", ("/api/v1/usage",)),
    RouterGroup("models", ("/api/v1/models",)),
    RouterGroup("approvals", ("/api/v1/approvals",)),
    RouterGroup("questions", ("/api/v1/questions",)),
    RouterGroup("followups", ("/api/v1/chats",)),
    # Share links (a chat's, the snapshot behind a token, mine) and the org's data policy (issue 38).
    RouterGroup(
        "shares",
        (
            "/api/v1/chats",
            "/api/v1/shares",
            "/api/v1/me/shares",
            "/api/v1/admin/retention",
            "/api/v1/admin/share-audit",
        ),
    ),
    # Projects: chats grouped with shared instructions, a default agent, a collection and a memory scope.
    RouterGroup("projects", ("/api/v1/projects",)),
    # A person's data: out (export), erased, and in (another assistant's export); an org admin's export.
    RouterGroup(
        "export",
        (
            "/api/v1/me/export",
            "/api/v1/me/exports",
            "/api/v1/me/erase",
            "/api/v1/me/import",
            "/api/v1/admin/export",
            "/api/v1/admin/exports",
        ),
        ("router", "admin_router"),
    ),
    RouterGroup("governance", ("/api/v1/admin", "/api/v1/keys"), ("router", "keys_router")),
    RouterGroup("me_settings", ("/api/v1/me/settings",)),
    RouterGroup("workflows", ("/api/v1/workflows",)),
    RouterGroup("workflow_outputs", ("/api/v1/workflows",)),
    RouterGroup("admin_console", ("/api/v1/admin",)),
    RouterGroup("hooks", ("/api/v1/hooks",)),
    RouterGroup("mcp_servers", ("/api/v1/admin/mcp-servers",)),
    RouterGroup("tools", ("/api/v1/tools",)),
    RouterGroup("memories", ("/api/v1/me/memories",)),
    RouterGroup("push", ("/api/v1/push",)),
    RouterGroup("attachments", ("/api/v1/attachments", "/api/v1/chats")),
    RouterGroup("knowledge", ("/api/v1/knowledge",)),
    RouterGroup("knowledge_collections", ("/api/v1/knowledge/collections", "/api/v1/knowledge/sources")),
    RouterGroup("agents", ("/api/v1/agents",)),
    RouterGroup("feedback", ("/api/v1/runs", "/api/v1/feedback")),
    RouterGroup("run_trace", ("/api/v1/runs",)),
    RouterGroup("evals", ("/api/v1/evals",)),
    RouterGroup("eval_cases", ("/api/v1/evals",)),
    RouterGroup("tool_policies", ("/api/v1/admin/tool-policies", "/api/v1/chats"), ("router", "chats_router")),
    # `/v1`, the OpenAI-compatible API: whole answers here; the stream function streams them (Mangum buffers).
    RouterGroup("routes", ("/v1",), package="personal_agent.openai_api"),
    # Channels in (docs/channels.md): the inbound endpoints (each verifies its own channel's signature), the admin's
    # channel settings and a member's linked accounts.
    RouterGroup("routes", ("/api/v1/channels",), package="personal_agent.channels"),
    RouterGroup("admin_routes", ("/api/v1/admin/channels",), package="personal_agent.channels"),
    RouterGroup("link_routes", ("/api/v1/me/channel-links",), package="personal_agent.channels"),
)
