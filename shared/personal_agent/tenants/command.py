"""The `pa tenants` subcommands: argument parsing and printing; the work is in the modules beside this one."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from personal_agent.tenants.params import TenantFile

# personal_agent.tenants.params (pydantic) is imported where a subcommand runs: `pa --help` and the terminal client
# are installed without the server's dependencies (`personal-agent[server]`).


def add_tenants_parser(sub: Any) -> None:
    """Register `pa tenants deploy|status|diff|usage` on the top-level subparsers."""
    tenants = sub.add_parser("tenants", help="deploy, inspect and meter tenant stacks (docs/operators.md)")
    actions = tenants.add_subparsers(dest="tenants_command", required=True)
    folder = argparse.ArgumentParser(add_help=False)
    folder.add_argument("--dir", type=Path, default=Path(os.environ.get("PA_TENANTS_DIR", "tenants")))
    folder.add_argument("--json", action="store_true", help="print JSON instead of a table")
    template = argparse.ArgumentParser(add_help=False)
    template.add_argument("--template", type=Path, help="a packaged template to use as is (skips the build)")
    template.add_argument("--artifact-bucket", default=os.environ.get("PA_ARTIFACT_BUCKET"))
    template.add_argument("--region", default=None, help="region of the build artifacts (default: the profile's)")
    template.add_argument("--poll-seconds", type=float, default=5.0, help=argparse.SUPPRESS)

    deploy = actions.add_parser("deploy", parents=[folder, template], help="build once, deploy tenants' stacks")
    deploy.add_argument("name", nargs="?", help="one tenant (its file's name)")
    deploy.add_argument("--all", action="store_true", help="every tenant in the folder")
    deploy.add_argument("--parallel", type=int, default=4, help="stacks deployed at once (default 4)")
    deploy.set_defaults(func=_deploy)
    actions.add_parser("status", parents=[folder], help="stack status, version, last deploy").set_defaults(func=_status)
    diff = actions.add_parser("diff", parents=[folder, template], help="a change set for one tenant, not executed")
    diff.add_argument("name")
    diff.set_defaults(func=_diff)
    usage = actions.add_parser("usage", parents=[folder], help="sum the metered usage of a month")
    usage.add_argument("--month", required=True, help="YYYY-MM")
    usage.add_argument("--bucket", help="the operator's metering bucket (default: the tenants' MeteringBucketName)")
    usage.add_argument("--prefix", default="metering/")
    usage.set_defaults(func=_usage)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def _fail(message: str) -> int:
    sys.stderr.write(f"pa tenants: {message}\n")
    return 2


def _table(rows: list[dict[str, Any]], columns: list[str], as_json: bool) -> None:
    if as_json:
        _say(json.dumps(rows, indent=2, default=str))
        return
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns]
    for row in [dict(zip(columns, columns, strict=True)), *rows]:
        _say("  ".join(str(row.get(c, "")).ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())


def _template(args: argparse.Namespace) -> Any:
    from personal_agent.tenants.template_source import build_and_package, deployable

    path = args.template
    if path is None:
        if not args.artifact_bucket:
            return None
        path = build_and_package(args.artifact_bucket, args.region)
    return deployable(path, args.artifact_bucket, args.region)


def _selected(args: argparse.Namespace) -> list[TenantFile]:
    from personal_agent.tenants.params import TenantFileError, load_tenants

    tenants = load_tenants(args.dir)
    if args.all == bool(args.name):
        raise TenantFileError("name one tenant or give --all")
    if args.name and args.name not in tenants:
        raise TenantFileError(f"no tenant {args.name!r} in {args.dir} (have: {', '.join(sorted(tenants)) or 'none'})")
    return list(tenants.values()) if args.all else [tenants[args.name]]


def _deploy(args: argparse.Namespace) -> int:
    from personal_agent.tenants.deploy import deploy_tenants
    from personal_agent.tenants.params import TenantFileError
    from personal_agent.tenants.template_source import platform_version

    try:
        chosen = _selected(args)
        template = _template(args)
    except (TenantFileError, ValueError) as exc:
        return _fail(str(exc))
    if template is None:
        return _fail("give --artifact-bucket (or PA_ARTIFACT_BUCKET) to build and upload, or --template")
    outcomes = deploy_tenants(chosen, template, platform_version(), args.parallel, args.poll_seconds)
    _table([asdict(o) for o in outcomes], ["tenant", "stack_name", "action", "status", "reason"], args.json)
    return 1 if any(o.action == "failed" for o in outcomes) else 0


def _status(args: argparse.Namespace) -> int:
    from personal_agent.tenants.params import TenantFileError, load_tenants
    from personal_agent.tenants.status import tenants_status

    try:
        rows = tenants_status(load_tenants(args.dir))
    except TenantFileError as exc:
        return _fail(str(exc))
    table = [asdict(r) | {"web_url": r.outputs.get("WebUrl", "")} for r in rows]
    columns = ["tenant", "stack_name", "status", "version", "last_deploy", "web_url"]
    _table(
        table if args.json else [r | {"tenant": r["tenant"] + ("" if r["has_file"] else " (no file)")} for r in table],
        columns,
        args.json,
    )
    return 0


def _diff(args: argparse.Namespace) -> int:
    from personal_agent.tenants.diff import diff_tenant
    from personal_agent.tenants.params import TenantFileError
    from personal_agent.tenants.template_source import platform_version

    try:
        args.all = False
        tenant = _selected(args)[0]
        template = _template(args)
    except (TenantFileError, ValueError) as exc:
        return _fail(str(exc))
    if template is None:
        return _fail("give --artifact-bucket (or PA_ARTIFACT_BUCKET) to build and upload, or --template")
    diff = diff_tenant(tenant, template, platform_version(), args.poll_seconds)
    if args.json:
        _say(json.dumps(asdict(diff), indent=2, default=str))
    else:
        _say(
            f"{diff.stack_name}: {'new stack' if diff.new_stack else 'update'}"
            f"{'' if diff.changes_anything else ' - no changes'}{' - FAILED: ' + diff.failure if diff.failure else ''}"
        )
        for name, (now, after) in sorted(diff.parameters.items()):
            _say(f"  parameter {name}: {now!r} -> {after!r}")
        for change in diff.resources:
            replace = f" (replacement: {change['Replacement']})" if change.get("Replacement") else ""
            _say(f"  {change['Action']:<7} {change['LogicalResourceId']} {change['ResourceType']}{replace}")
    return 1 if diff.failure else 0


def _usage(args: argparse.Namespace) -> int:
    from personal_agent.tenants.metered_totals import SUMMED, month_usage
    from personal_agent.tenants.params import TenantFileError, load_tenants

    try:
        bucket = args.bucket or next(
            (
                t.parameters["MeteringBucketName"]
                for t in load_tenants(args.dir).values()
                if t.parameters.get("MeteringBucketName")
            ),
            None,
        )
        if not bucket:
            return _fail("give --bucket, or set MeteringBucketName in the tenants' parameter files")
        rows = month_usage(bucket, args.month, args.prefix)
    except (TenantFileError, ValueError) as exc:
        return _fail(str(exc))
    table: list[dict[str, Any]] = [
        {"tenant": u.tenant, "stage": u.stage, "from": u.source, "objects": u.objects, **u.totals} for u in rows
    ]
    if table and not args.json:
        table.append({"tenant": "TOTAL", **{k: round(sum(u.totals[k] for u in rows), 8) for k in SUMMED}})
    _table(table, ["tenant", "stage", "from", "objects", *SUMMED], args.json)
    return 0
