"""`pa dev`: the local stack plus one uvicorn process serving the API, the SSE relay and the web chat."""

from __future__ import annotations

import sys
import time

from fastapi import FastAPI

from personal_agent.errors import ConfigurationError
from personal_agent.heap import freeze_startup_heap
from personal_agent.identity.dev_issuer import dev_issuer_refusal
from personal_agent.local.demo_mcp import DemoMcpThread
from personal_agent.local.ports import ensure_port_free
from personal_agent.local.serving import ReadyServer, serve
from personal_agent.local.stack import LocalStack
from personal_agent.observability import route_package_logs
from personal_agent.settings import get_settings


def build_dev_app(demo_mcp_url: str | None = None) -> FastAPI:
    """The app the dev server serves (the API plus, in local mode, the relay, the web chat, the scheduler and
    the demo MCP server's registration)."""
    from personal_agent.local.dev_app import create_dev_app

    return create_dev_app(scheduler=True, demo_mcp_url=demo_mcp_url)


def run_dev_server() -> int:
    """Start everything, print where it is, serve until Ctrl-C, then stop every part."""
    started = time.perf_counter()
    route_package_logs()  # the app's warnings and errors as JSON lines, as on Lambda
    settings = get_settings()
    try:
        ensure_port_free(settings.host, settings.port, "the dev server", "PA_PORT")
        stack = LocalStack(settings).start()
    except ConfigurationError as exc:
        print(f"pa dev: {exc}", file=sys.stderr)
        return 2
    demo_mcp = DemoMcpThread().start() if settings.is_local else None
    try:
        import uvicorn

        app = build_dev_app(demo_mcp.url if demo_mcp is not None else None)
        config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning", lifespan="on")
        url = f"http://{settings.host}:{settings.port}"

        def announce() -> None:
            # The engine (imported by the first run anyway) and everything startup made leave the collector's
            # generations before the first request (`personal_agent.heap`).
            freeze_startup_heap(preload=("personal_agent.engine.runner",))
            # Printed once the server listens, so the line means "ready" (tests and scripts wait for it).
            parts = ", ".join(f"{k} {v:.1f}s" for k, v in stack.timings.items())
            print(f"Personal Agent is running at {url}  (ready in {time.perf_counter() - started:.1f}s: {parts})")
            refusal = dev_issuer_refusal(settings)
            if refusal is None:
                print(f"  log in: open {url} and press 'Sign in' (Dev login: org acme, user alice, role admin)")
                print("          or run `pa token --org acme --user alice --role admin` for a bearer token")
            else:
                print(f"  log in: with your identity provider ({refusal})")
            print(f"  data: {settings.data_dir.resolve()}   stop: Ctrl-C")
            sys.stdout.flush()

        serve(ReadyServer(config, on_ready=announce))
    except KeyboardInterrupt:
        pass
    finally:
        if demo_mcp is not None:
            demo_mcp.stop()
        stack.stop()
        print("pa dev: stopped")
    return 0
