"""The client subcommands of `pa`: login, logout, run, runs, chat. Each prints a failure as one line on stderr and
exits with its code (ClientError), never a traceback."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from personal_agent.terminal import credentials
from personal_agent.terminal.client import Api, ClientError, resolve_url
from personal_agent.terminal.events import RunFollower
from personal_agent.terminal.run_command import add_run_parser

PAT_LIFETIME = 100 * 365 * 24 * 3600  # a stored PAT is used until the server refuses it


def _guarded(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except ClientError as exc:
            print(f"pa {args.command}: {exc}", file=sys.stderr)
            return exc.exit_code
        except KeyboardInterrupt:
            print(f"pa {args.command}: interrupted", file=sys.stderr)
            return 1

    return run


def _login(args: argparse.Namespace) -> int:
    from personal_agent.terminal.device_login import login

    url = resolve_url(args.url)
    if args.token:
        Api(url, args.token).call("GET", "/api/v1/me")  # refuse a token the deployment does not accept
        login_ = credentials.Login(args.token, time.time() + PAT_LIFETIME, token_endpoint="")
        where = credentials.save(url, login_)
    else:
        where = login(url, lambda line: print(line, flush=True))
    me = Api.connect(url, None).call("GET", "/api/v1/me")
    org = (me.get("org") or {}).get("slug")
    print(f"Signed in to {url} as {me.get('subject')} (org {org}); stored in {where}")
    return 0


def _logout(args: argparse.Namespace) -> int:
    from personal_agent.terminal.device_login import logout

    url = resolve_url(args.url)
    print(f"Signed out of {url}" if logout(url) else f"Not signed in to {url}")
    return 0


def _runs(args: argparse.Namespace) -> int:
    api = Api.connect(args.url, args.token)
    if args.action == "get":
        print(json.dumps(api.call("GET", f"/api/v1/runs/{args.run_id}"), indent=2))
    elif args.action == "cancel":
        print(json.dumps(api.call("POST", f"/api/v1/runs/{args.run_id}/cancel")))
    else:
        url = f"/api/v1/runs/{args.run_id}/events"
        follower = RunFollower(api, url)
        for event in follower.events():
            print(json.dumps(event), flush=True)
            if not args.follow and event.get("type") == "RUN_FINISHED":
                break
    return 0


def _chat(args: argparse.Namespace) -> int:
    from personal_agent.terminal.chat_app import run_chat

    return run_chat(Api.connect(args.url, args.token), agent=args.agent, chat_id=args.chat, model=args.model)


def add_terminal_parsers(sub: Any) -> None:
    """`pa login`, `pa logout`, `pa run`, `pa runs`, `pa chat`."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", help="the deployment (default PA_URL, else http://127.0.0.1:8000)")
    common.add_argument("--token", help="a personal access token or bearer token (default PA_TOKEN; wins over a login)")
    login = sub.add_parser("login", parents=[common], help="sign in with the device grant (or store --token)")
    login.set_defaults(func=_guarded(_login))
    logout = sub.add_parser("logout", parents=[common], help="revoke and forget the stored login")
    logout.set_defaults(func=_guarded(_logout))
    add_run_parser(sub, common)
    sub.choices["run"].set_defaults(func=_guarded(sub.choices["run"].get_default("func")))
    runs = sub.add_parser("runs", parents=[common], help="a run: get, cancel, or its events")
    runs.add_argument("action", choices=["get", "cancel", "events"])
    runs.add_argument("run_id")
    runs.add_argument("--follow", action="store_true", help="events: to the run's end, across approvals")
    runs.set_defaults(func=_guarded(_runs))
    chat = sub.add_parser("chat", parents=[common], help="an interactive chat in the terminal")
    chat.add_argument("--agent", help="the agent's slug")
    chat.add_argument("--chat", help="continue this chat (its id)")
    chat.add_argument("--model", help="a model name")
    chat.set_defaults(func=_guarded(_chat))
