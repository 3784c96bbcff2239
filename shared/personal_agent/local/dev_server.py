"""`pa dev`: the local stack plus the uvicorn processes (`local.dev_processes`) serving the API, the SSE relay and
the web chat."""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable

from fastapi import FastAPI

from personal_agent.errors import ConfigurationError
from personal_agent.heap import freeze_startup_heap
from personal_agent.identity.dev_issuer import dev_issuer_refusal
from personal_agent.local.demo_mcp import DemoMcpThread
from personal_agent.local.dev_processes import DevWorkers, listening_socket, process_count
from personal_agent.local.ports import ensure_port_free
from personal_agent.local.postgres import adopt_orphans
from personal_agent.local.serving import ReadyServer, serve, server_config
from personal_agent.local.stack import LocalStack
from personal_agent.mcp_servers.endpoint import allow_own_server
from personal_agent.observability import route_process_logs
from personal_agent.settings import Settings, get_settings


def build_dev_app(demo_mcp_url: str | None = None) -> FastAPI:
    """The app the dev server serves (the API plus, in local mode, the relay, the web chat, the scheduler and
    the demo MCP server's registration)."""
    from personal_agent.local.dev_app import create_dev_app

    return create_dev_app(scheduler=True, demo_mcp_url=demo_mcp_url, access_log=True)


def _freeze_heap() -> None:
    # The engine (imported by the first run anyway) and everything startup made leave the collector's
    # generations before the first request (`personal_agent.heap`).
    freeze_startup_heap(preload=("personal_agent.engine.runner",))


def _serve_worker(sock: socket.socket) -> Callable[[Callable[[], None]], None]:
    """What a forked worker runs once it has the stack's env: the dev app without the scheduler, on `sock`."""

    def run(report_ready: Callable[[], None]) -> None:
        from personal_agent.local.dev_app import create_dev_app

        get_settings.cache_clear()  # the settings now see the stack's env
        app = create_dev_app(worker=True, access_log=True)

        def ready() -> None:
            _freeze_heap()
            report_ready()

        serve(ReadyServer(server_config(app), on_ready=ready), sockets=[sock])

    return run


def _start_demo_mcp() -> DemoMcpThread:
    """The demo MCP server on loopback, allow-listed as the dev server's own (any other needs PA_MCP_ALLOW_HOSTS)."""
    demo_mcp = DemoMcpThread().start()
    allow_own_server(demo_mcp.url)
    return demo_mcp


def _start_stack(settings: Settings, workers: DevWorkers) -> LocalStack | None:
    """The local stack, or None (said on stderr) when it cannot start; the workers are stopped then."""
    adopt_orphans()  # the embedded Postgres is reparented here once `pg_ctl` detaches it: the supervisor reaps it
    try:
        return LocalStack(settings).start()
    except ConfigurationError as exc:
        workers.stop()
        print(f"pa dev: {exc}", file=sys.stderr)
        return None
    except BaseException:
        workers.stop()
        raise


def run_dev_server() -> int:
    """Start everything, print where it is, serve until Ctrl-C, then stop every part."""
    started = time.perf_counter()
    route_process_logs()  # one JSON line per record, as on Lambda: an access line per request, libraries' warnings
    settings = get_settings()
    try:
        ensure_port_free(settings.host, settings.port, "the dev server", "PA_PORT")
    except ConfigurationError as exc:
        print(f"pa dev: {exc}", file=sys.stderr)
        return 2
    processes = process_count(settings.dev_processes)
    sock = listening_socket(settings.host, settings.port)
    if processes > 1:
        import personal_agent.local.dev_app  # noqa: F401  imported once, before the fork: shared by the workers
    workers = DevWorkers.fork(processes - 1, _serve_worker(sock))  # before any thread exists (the stack's)
    stack = _start_stack(settings, workers)
    if stack is None:
        return 2
    demo_mcp = _start_demo_mcp() if settings.is_local else None
    # Restarts Postgres, Valkey, moto or LocalStack when one dies, and names their processes in `<data>/pids.json`.
    supervisor = stack.supervisor({"pa_dev": os.getpid(), "workers": [w.pid for w in workers.workers]}).start()
    try:
        workers.start(dict(os.environ))
        app = build_dev_app(demo_mcp.url if demo_mcp is not None else None)
        url = f"http://{settings.host}:{settings.port}"

        def announce() -> None:
            _freeze_heap()
            serving = 1 + workers.wait_ready()
            # Printed once every process serves, so the line means "ready" (tests and scripts wait for it).
            parts = ", ".join(f"{k} {v:.1f}s" for k, v in stack.timings.items())
            print(
                f"Personal Agent is running at {url}  (ready in {time.perf_counter() - started:.1f}s: {parts}; "
                f"{serving} process{'es' if serving > 1 else ''})"
            )
            refusal = dev_issuer_refusal(settings)
            if refusal is None:
                print(f"  log in: open {url} and press 'Sign in' (Dev login: org acme, user alice, role admin)")
                print("          or run `pa token --org acme --user alice --role admin` for a bearer token")
            else:
                print(f"  log in: with your identity provider ({refusal})")
            print(f"  data: {settings.data_dir.resolve()}   stop: Ctrl-C")
            sys.stdout.flush()

        serve(ReadyServer(server_config(app), on_ready=announce), sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        workers.stop()  # before the stack: their shutdown releases their runs' leases in Postgres
        supervisor.stop()  # before the stack stops its parts on purpose
        sock.close()
        if demo_mcp is not None:
            demo_mcp.stop()
        stack.stop()
        print("pa dev: stopped")
    return 0
