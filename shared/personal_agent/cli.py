"""The `pa` command: `pa dev`, `pa migrate`."""

from __future__ import annotations

import argparse
import sys


def _dev(_: argparse.Namespace) -> int:
    from personal_agent.local.dev_server import run_dev_server

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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `pa` script."""
    parser = argparse.ArgumentParser(prog="pa", description="Personal Agent command line")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("dev", help="run the local stack and the web chat").set_defaults(func=_dev)
    sub.add_parser("migrate", help="apply database migrations").set_defaults(func=_migrate)
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
