"""The `pa` command: `pa dev`, `pa migrate`, `pa token`, `pa tenants`; the terminal client (`pa login`, `pa run`,
`pa chat`, ...: personal_agent/terminal)."""

from __future__ import annotations

import argparse
import importlib.util
import sys

# What needs the `server` extra; the terminal client's commands (login, logout, run, runs, chat, eval) need only httpx,
# rich, textual and keyring, which are all a plain `pipx install` / `uv tool install` brings.
SERVER_COMMANDS = frozenset({"dev", "migrate", "token", "push-keys", "tenants"})


def _dev(args: argparse.Namespace) -> int:
    import os

    from personal_agent.local.dev_server import run_dev_server

    if args.aws:
        os.environ["PA_AWS"] = args.aws  # read by the settings, which are not loaded yet

    return run_dev_server()


def _migrate(_: argparse.Namespace) -> int:
    from personal_agent.db.migrate import apply_migrations
    from personal_agent.settings import get_settings

    settings = get_settings()
    url = settings.database_admin_url or settings.database_url
    if not url:
        print("pa migrate: set DATABASE_ADMIN_URL (the owner) or DATABASE_URL", file=sys.stderr)
        return 2
    applied = apply_migrations(url, app_role=settings.database_app_role, app_password=settings.database_app_password)
    print(f"applied: {', '.join(applied) or 'nothing (up to date)'}")
    return 0


def _token(args: argparse.Namespace) -> int:
    from personal_agent.identity.claims import ROLES, normalize_org
    from personal_agent.identity.dev_issuer import DevIssuer, dev_issuer_refusal
    from personal_agent.settings import get_settings

    settings = get_settings()
    refusal = dev_issuer_refusal(settings)
    if refusal is not None:
        print(f"pa token: {refusal}; use your identity provider", file=sys.stderr)
        return 2
    orgs = [normalize_org(o) for o in args.org]
    if None in orgs:
        print("pa token: an org is a slug: lowercase letters, digits and '-', at most 63", file=sys.stderr)
        return 2
    roles = args.role or ["user"]
    unknown = sorted(set(roles) - set(ROLES))
    if unknown:
        print(f"pa token: unknown role {', '.join(unknown)} (choose from {', '.join(ROLES)})", file=sys.stderr)
        return 2
    issuer = DevIssuer.from_settings(settings)
    ttl = args.ttl or settings.dev_token_ttl_seconds
    print(issuer.mint(subject=args.user, orgs=[o for o in orgs if o], roles=roles, ttl_seconds=ttl, email=args.email))
    return 0


def _push_keys(_: argparse.Namespace) -> int:
    from personal_agent.push.vapid import new_key_pair

    private, public = new_key_pair()
    print(f"PA_VAPID_PUBLIC_KEY={public}")
    print(f"PA_VAPID_PRIVATE_KEY={private}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `pa` script."""
    parser = argparse.ArgumentParser(prog="pa", description="Personal Agent command line")
    sub = parser.add_subparsers(dest="command", required=True)
    dev = sub.add_parser("dev", help="run the local stack and the web chat")
    dev.add_argument(
        "--aws",
        choices=["moto", "localstack"],
        help="the local AWS emulator (default PA_AWS, else moto); localstack needs `make localstack`",
    )
    dev.set_defaults(func=_dev)
    sub.add_parser("migrate", help="apply database migrations").set_defaults(func=_migrate)
    token = sub.add_parser(
        "token",
        help="print a dev-issuer bearer token (local mode)",
        description="Print a bearer token signed by the local dev issuer, e.g. `pa token --org acme --user alice`.",
    )
    token.add_argument("--org", action="append", required=True, help="org slug; repeat to grant several")
    token.add_argument("--user", required=True, help="the user's subject (created on first use)")
    token.add_argument("--role", action="append", help="admin, org-admin or user (default user); repeatable")
    token.add_argument("--email", help="the user's e-mail claim")
    token.add_argument("--ttl", type=int, help="lifetime in seconds (default PA_DEV_TOKEN_TTL_SECONDS)")
    token.set_defaults(func=_token)
    sub.add_parser(
        "push-keys",
        help="print a new VAPID key pair for web push",
        description="Print a new VAPID key pair: the deploy's WebPushPublicKey and WebPushPrivateKey parameters.",
    ).set_defaults(func=_push_keys)
    from personal_agent.tenants.command import add_tenants_parser

    add_tenants_parser(sub)
    from personal_agent.evals.command import add_eval_parser

    add_eval_parser(sub)
    from personal_agent.terminal.command import add_terminal_parsers

    add_terminal_parsers(sub)
    args = parser.parse_args(argv)
    if args.command in SERVER_COMMANDS and importlib.util.find_spec("pydantic_settings") is None:
        # A client-only install (`pipx install personal-agent`): say what to install, not an ImportError.
        print(f"pa {args.command}: this needs the server: install 'personal-agent[server]'", file=sys.stderr)
        return 2
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
