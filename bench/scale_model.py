"""A scale model (issue 35, item 7): what 1k, 10k and 100k concurrent conversations need on AWS, from the measured
per-turn figures, against AWS's published default quotas. Printed, not asserted; every input is printed and a flag.

A "concurrent conversation" is a signed-in web chat: it holds the user's feed open (an SSE stream on the stream
function's URL, `/api/v1/feed`, reopened every `PA_SSE_MAX_LIFETIME_SECONDS`) and sends a turn every
`--turn-interval` seconds; a turn is what `bench/economics.py` measures (3 tool calls, 4 model requests, the model's
latency included: `--turn-seconds`). Rates follow from Little's law: concurrency = arrival rate x time held.

Per-turn inputs default to the figures measured for issue 35 (`bench/PROFILE.md`, "Issue 35"); `--economics FILE`
reads them from the JSON line `bench/economics.py` ends with instead.

Run: `.venv/bin/python bench/scale_model.py [--turn-interval 60] [--economics /tmp/economics.txt]`
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SIZES = (1_000, 10_000, 100_000)

# AWS's published defaults (us-east-1), each with where it is published.
QUOTAS = {
    "lambda_concurrency": (
        1_000,
        "Lambda concurrent executions per account per Region (raisable to tens of thousands)",
        "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html",
    ),
    "lambda_scaling": (
        1_000,
        "Lambda: new execution environments per function every 10 s",
        "https://docs.aws.amazon.com/lambda/latest/dg/scaling-behavior.html",
    ),
    "api_rps": (
        10_000,
        "API Gateway throttle per account per Region, requests/s (burst bucket 5,000)",
        "https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html",
    ),
    "sfn_start_rps": (
        300,
        "Step Functions Standard StartExecution refill rate/s (bucket 1,300)",
        "https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html",
    ),
    "sfn_transition_rps": (
        5_000,
        "Step Functions Standard StateTransition refill rate/s (bucket 5,000)",
        "https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html",
    ),
    "sfn_open": (
        1_000_000,
        "Step Functions open executions per account per Region",
        "https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html",
    ),
    "pg_connections": (
        900,
        "Aurora PostgreSQL max_connections = LEAST(DBInstanceClassMemory/9531392, 5000); ~900 at the template's"
        " AuroraMaxCapacity 4 ACU (~2 GiB each)",
        "https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-serverless-v2.setting-capacity.html",
    ),
    "pg_proxy_connections": (
        810,
        "RDS Proxy (template AuroraProxy=true): the connections it opens to Aurora, MaxConnectionsPercent 90 of"
        " max_connections (~900 at 4 ACU); its client side has no published per-proxy quota (20 proxies per account"
        " and Region, 200 secrets and 20 endpoints per proxy are the published ones)",
        "https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-connections.html ;"
        " https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy.html#rds-proxy.limitations",
    ),
    "upstash_cps": (
        10_000,
        "Upstash Redis pay-as-you-go: max commands/s (bandwidth: 200 GB/month free, then $0.03/GB)",
        "https://upstash.com/docs/redis/overall/billing",
    ),
    "stream_bandwidth": (
        6 * 2**20,
        "Lambda response streaming: first 6 MB of a response uncapped, then 2 MB/s (max 200 MB)",
        "https://docs.aws.amazon.com/lambda/latest/dg/configuration-response-streaming.html",
    ),
}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--turn-interval", type=float, default=60.0, help="seconds between a conversation's turns")
    p.add_argument("--turn-seconds", type=float, default=7.3, help="a turn, POST to RUN_FINISHED, model included")
    p.add_argument("--api-calls", type=int, default=2, help="API Gateway requests per turn")
    p.add_argument("--api-seconds", type=float, default=0.05, help="API Lambda time per request")
    p.add_argument("--redis-commands", type=float, default=None, help="Valkey commands per turn (paced, measured)")
    p.add_argument("--upstash-requests", type=float, default=None, help="Upstash REST requests per turn (measured)")
    p.add_argument("--events", type=int, default=332, help="AG-UI events per turn (measured: XADDs before issue 35)")
    p.add_argument("--event-bytes", type=int, default=130, help="bytes of one event on the bus and the wire")
    p.add_argument("--pg-transactions", type=int, default=8, help="Postgres transactions per run (issue 35: 8)")
    p.add_argument("--pg-transaction-ms", type=float, default=5.0, help="time a transaction holds its connection")
    p.add_argument("--pg-idle-seconds", type=float, default=300, help="a Lambda's pool keeps an idle connection")
    p.add_argument("--feed-lifetime", type=float, default=840.0, help="PA_SSE_MAX_LIFETIME_SECONDS")
    p.add_argument("--feed-heartbeat", type=float, default=15.0, help="PA_SSE_HEARTBEAT_SECONDS (an XREAD each)")
    p.add_argument("--upstash-idle-polls", type=float, default=0.67, help="XREADs/s an idle feed polls on Upstash")
    p.add_argument("--transitions", type=int, default=3, help="state transitions per durable turn (measured)")
    p.add_argument("--economics", type=Path, default=None, help="bench/economics.py output: its JSON line")
    args = p.parse_args()
    measured = {"redis_commands": 519.0, "upstash_requests": 381.0}  # issue 35 after figures, inline (PROFILE.md)
    if args.economics is not None:
        line = [x for x in args.economics.read_text().splitlines() if x.startswith("{")][-1]
        figures = json.loads(line)
        measured["redis_commands"] = figures["redis_commands"]["inline"]
        measured["upstash_requests"] = figures.get("upstash_requests", {}).get("inline", measured["upstash_requests"])
    args.redis_commands = args.redis_commands or measured["redis_commands"]
    args.upstash_requests = args.upstash_requests or measured["upstash_requests"]
    return args


def needs(n: int, a: argparse.Namespace) -> dict[str, float]:
    """What `n` concurrent conversations need, by resource."""
    turns = n / a.turn_interval  # turns started per second
    run_streams = turns * a.turn_seconds  # a run's SSE stream, open for the turn
    workers = turns * a.turn_seconds  # the run worker (inline) or steps (durable) Lambda, waiting on the model
    api = turns * a.api_calls * a.api_seconds
    feeds = float(n)  # every signed-in page holds its feed open
    feed_reads = n / a.feed_heartbeat  # an idle XREAD BLOCK ends each heartbeat
    return {
        "turns_per_s": turns,
        "lambda_stream": run_streams + feeds,
        "lambda_worker": workers,
        "lambda_api": api,
        "lambda_total": run_streams + feeds + workers + api,
        "lambda_new_envs_per_10s": (n / a.feed_lifetime) * 10,  # feed reconnects: new invocations, warm or cold
        "api_rps": turns * a.api_calls,
        "sfn_start_rps": turns,
        "sfn_transition_rps": turns * a.transitions,
        "sfn_open": turns * a.turn_seconds,
        # Without a proxy every warm Lambda environment that touched Postgres holds a connection to it; with RDS Proxy
        # those same connections end at the proxy (its client side), and Aurora sees only what the proxy opens: the
        # transactions in flight (nothing the app does pins a client to one, docs/deploy.md), x2 for bursts.
        "pg_conn_direct": workers + api + run_streams + n / a.feed_lifetime * a.pg_idle_seconds,
        "pg_client_conn_proxy": workers + api + run_streams + n / a.feed_lifetime * a.pg_idle_seconds,
        "pg_conn_proxy": turns * a.pg_transactions * a.pg_transaction_ms / 1000 * 2,
        "redis_ops_valkey": turns * a.redis_commands + feed_reads,
        "redis_ops_upstash": turns * a.upstash_requests + n * a.upstash_idle_polls,
        "redis_bytes_per_s": turns * a.events * a.event_bytes * 2,  # written once, read once by the run's stream
    }


LIMITS = (
    (
        "lambda_total",
        "lambda_concurrency",
        "raise Lambda concurrency (Service Quotas); serve the feed from the API"
        " (long-poll or push) instead of holding a stream Lambda per signed-in page",
    ),
    ("api_rps", "api_rps", "raise the API Gateway account throttle"),
    ("sfn_start_rps", "sfn_start_rps", "durable only: raise StartExecution (or run chat turns inline, as default)"),
    ("sfn_transition_rps", "sfn_transition_rps", "durable only: raise StateTransition"),
    ("pg_conn_direct", "pg_connections", "AuroraProxy=true (RDS Proxy: connections become transactions) or more ACU"),
    ("pg_conn_proxy", "pg_proxy_connections", "behind RDS Proxy: more ACU (max_connections follows memory)"),
    ("redis_ops_upstash", "upstash_cps", "Upstash fixed/enterprise plan, or ElastiCache; poll idle streams slower"),
)


def report(a: argparse.Namespace) -> None:
    print("Scale model (printed, not asserted). Inputs:")
    for key, value in sorted(vars(a).items()):
        print(f"  {key:<20} {value}")
    print("\nAWS published defaults used:")
    for key, (value, what, url) in QUOTAS.items():
        print(f"  {key:<20} {value:>10,}  {what}\n  {'':<20} {'':>10}  {url}")
    rows = {n: needs(n, a) for n in SIZES}
    print(f"\n{'conversations':<34}" + "".join(f"{n:>14,}" for n in SIZES))
    for key in rows[SIZES[0]]:
        print(f"  {key:<32}" + "".join(f"{rows[n][key]:>14,.1f}" for n in SIZES))
    print(f"  {'redis MB/s':<32}" + "".join(f"{rows[n]['redis_bytes_per_s'] / 2**20:>14,.2f}" for n in SIZES))
    print("\nWhich quota bites first (need / default quota; > 1 means over), and what moves each one over:")
    for n in SIZES:
        over = sorted(((rows[n][k] / QUOTAS[q][0], k, fix) for k, q, fix in LIMITS), reverse=True)
        print(f"  {n:>7,}: " + ", ".join(f"{k} {r:,.2f}x" for r, k, _ in over))
        for ratio, key, fix in over:
            if ratio > 1:
                print(f"           {key}: {fix}")
    print(
        "\nBehind RDS Proxy Aurora sees pg_conn_proxy (transactions in flight); the Lambdas' connections"
        " (pg_client_conn_proxy) end at the proxy. A pinned client connection would hold its Aurora connection for"
        " its whole session, turning pg_conn_proxy back into pg_client_conn_proxy: the app pins none (no session SET,"
        " xact advisory locks only, no LISTEN, PA_DATABASE_PREPARED_STATEMENTS=false behind the proxy)."
    )
    per_stream = a.events * a.event_bytes
    cap = QUOTAS["stream_bandwidth"][0]
    print(
        f"\nA run's stream sends ~{per_stream / 1024:.0f} KB per turn, far under the {cap / 2**20:.0f} MB a streamed"
        " Lambda response sends uncapped (then 2 MB/s); an 840 s feed stream sends heartbeats and announcements only."
    )


if __name__ == "__main__":
    report(parse_args())
