"""The `pa eval` subcommands, a client of the API (`/api/v1/evals`): import a JSONL dataset, run an agent version or
a model over a dataset and print its report, compare two evaluation runs as Markdown or JSON.

The API is `--url` (default `PA_API_URL`, else `http://127.0.0.1:$PA_PORT`), called with `--token` (default
`PA_TOKEN`, e.g. from `pa token --org acme --user ada --role org-admin`). `pa eval run --scorer` takes a kind or
`kind:JSON`, the JSON the API's scorer fields (`regex:{"pattern": "^4\\d$"}`); a scorer the API would refuse is a
usage error (exit 2) before any call."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

POLL_SECONDS = 0.5


def add_eval_parser(sub: Any) -> None:
    """Register `pa eval dataset|run|compare` on the top-level subparsers."""
    evals = sub.add_parser("eval", help="evaluation datasets and runs over the API (docs/evals.md)")
    actions = evals.add_subparsers(dest="eval_command", required=True)
    api = argparse.ArgumentParser(add_help=False)
    api.add_argument(
        "--url", default=os.environ.get("PA_API_URL", f"http://127.0.0.1:{os.environ.get('PA_PORT', 8000)}")
    )
    api.add_argument("--token", default=os.environ.get("PA_TOKEN"), help="an org admin's bearer token")
    api.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    dataset = actions.add_parser("dataset", parents=[api], help="create a dataset from a JSONL file")
    dataset.add_argument("name")
    dataset.add_argument("file", type=Path)
    dataset.set_defaults(func=_dataset)
    run = actions.add_parser("run", parents=[api], help="run an agent version or a model over a dataset")
    run.add_argument("dataset", help="the dataset's name or id")
    run.add_argument("--agent", help="SLUG or SLUG@VERSION")
    run.add_argument("--model")
    run.add_argument("--budget", type=float, default=1.0, help="USD the evaluation may spend (default 1)")
    run.add_argument(
        "--scorer",
        action="append",
        type=scorer_arg,
        help='KIND or KIND:JSON, e.g. \'tool_called:{"tool": "calculate", "args": {"expression": "6*7"}}\''
        " (repeatable; default contains; docs/evals.md)",
    )
    run.set_defaults(func=_run)
    compare = actions.add_parser("compare", parents=[api], help="two evaluation runs side by side")
    compare.add_argument("a")
    compare.add_argument("b")
    compare.set_defaults(func=_compare)


SCORER_FIELDS = ("tool", "args", "max_ms", "max_usd", "pattern", "document", "text", "schema", "rubric", "model")


def scorer_arg(text: str) -> dict[str, Any]:
    """`--scorer KIND` or `KIND:JSON` as the API's scorer object (`arguments` is taken for `args`), checked as the
    API checks it (`evals.scorers.validate`); argparse reports an ArgumentTypeError as a usage error, exit 2."""
    kind, colon, given = text.partition(":")
    try:
        fields = json.loads(given) if colon else {}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{kind}: the scorer's JSON does not parse: {exc}") from exc
    if not isinstance(fields, dict):
        raise argparse.ArgumentTypeError(f"{kind}: the scorer's JSON must be an object")
    if "arguments" in fields:
        fields["args"] = fields.pop("arguments")
    unknown = sorted(set(fields) - set(SCORER_FIELDS))
    if unknown:
        raise argparse.ArgumentTypeError(
            f"{kind}: unknown field(s) {', '.join(unknown)}; one of {', '.join(SCORER_FIELDS)}"
        )
    scorer = {"kind": kind.strip(), **fields}
    from personal_agent.errors import InvalidInput
    from personal_agent.evals.scorers import validate

    try:
        validate([scorer])
    except InvalidInput as exc:
        raise argparse.ArgumentTypeError(exc.message) from exc
    except ImportError:  # a client without jsonschema: the API checks the schema
        pass
    return scorer


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def _client(args: argparse.Namespace) -> Any:
    import httpx

    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    return httpx.Client(base_url=args.url, headers=headers, timeout=60)


def _ok(response: Any) -> Any:
    if response.status_code >= 400:
        raise SystemExit(f"pa eval: {response.status_code} {response.text}")
    return response.json()


def _dataset(args: argparse.Namespace) -> int:
    with _client(args) as http:
        body = {"name": args.name, "jsonl": args.file.read_text(encoding="utf-8")}
        created = _ok(http.post("/api/v1/evals/datasets", json=body))
    _say(json.dumps(created) if args.json else f"dataset {created['name']} ({created['id']}): {created['cases']} cases")
    return 0


def _run(args: argparse.Namespace) -> int:
    agent, _, version = (args.agent or "").partition("@")
    with _client(args) as http:
        dataset = _dataset_id(http, args.dataset)
        body = {
            "dataset": dataset,
            "agent": agent or None,
            "version": int(version) if version else None,
            "model": args.model,
            "budget_usd": args.budget,
            "scorers": args.scorer or [{"kind": "contains"}],
        }
        accepted = _ok(http.post("/api/v1/evals/runs", json=body))
        report = _ok(http.get(accepted["status_url"]))
        while report["status"] in ("queued", "running"):
            time.sleep(POLL_SECONDS)  # a client polling the status URL it was given
            report = _ok(http.get(accepted["status_url"]))
    _say(json.dumps(report) if args.json else run_markdown(report))
    return 0 if report["status"] in ("succeeded", "budget_exhausted") else 1


def _dataset_id(http: Any, name_or_id: str) -> str:
    for item in _ok(http.get("/api/v1/evals/datasets"))["items"]:
        if name_or_id in (item["id"], item["name"]):
            return str(item["id"])
    raise SystemExit(f"pa eval: no dataset {name_or_id!r}")


def _compare(args: argparse.Namespace) -> int:
    from personal_agent.evals.compare_table import compare_markdown

    with _client(args) as http:
        report = _ok(http.get("/api/v1/evals/compare", params={"a": args.a, "b": args.b}))
    _say(json.dumps(report) if args.json else compare_markdown(report))
    return 0


def run_markdown(report: dict[str, Any]) -> str:
    summary = report["summary"]
    lines = [
        f"# Evaluation {report['id']} — {report['status']}",
        f"score {summary['score']}, cost ${summary['cost_usd']:.6f}, p50 {summary['latency_ms_p50']} ms,"
        f" {summary['cases_done']} of {summary['cases_total']} cases",
        "",
        "| # | input | score | scores | cost | ms |",
        "|---|---|---|---|---|---|",
    ]
    for case in report["cases"]:
        lines.append(
            f"| {case['position'] + 1} | {case['input'][:60]} | {case['score']:.2f} | {json.dumps(case['scores'])}"
            f" | ${case['cost_usd']:.6f} | {case['latency_ms']} |"
        )
    return "\n".join(lines)
