"""Idle monthly cost of one tenant stack, for each database choice (template.yaml's `Database` parameter).

"Idle" is a month with no user traffic: what is billed by the hour or the month whatever happens, plus what the
stack's own schedule (the metering export) wakes up. The resources are counted from template.yaml with its
conditions evaluated for each choice, so the figures follow the template; prices are list prices (us-east-1)
printed as inputs. Prints every input and the totals; asserts nothing.

    .venv/bin/python bench/idle_cost.py [--metering-hours 6] [--storage-gb 1]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))

from personal_agent.local.lambda_registry import load_template  # noqa: E402

HOURS = 730  # a month
PRICES = {
    "kms_key_month": 1.00,
    "secret_month": 0.40,
    "alarm_metric_month": 0.10,
    "dashboard_month": 3.00,  # the first three dashboards of an account are free
    "nat_gateway_hour": 0.045,
    "public_ipv4_hour": 0.005,
    "aurora_storage_gb_month": 0.10,
    "aurora_acu_hour": 0.12,
    "aurora_min_acu_awake": 0.5,
    "aurora_auto_pause_s": 300,
    "neon_storage_gb_month": 0.35,
    "neon_cu_hour": 0.14,
    "neon_min_cu_awake": 0.25,
    "neon_suspend_s": 300,
    "upstash_idle_month": 0.00,  # pay per command; an idle database is not billed beyond its storage (free tier)
    "metering_run_s": 10,
}
SCENARIOS = {
    "external (scale-to-zero Postgres + Upstash)": {"Database": "external"},
    "aurora (Serverless v2 at 0 ACU + Upstash)": {"Database": "aurora"},
}
COMMON = {
    "OidcIssuer": "https://id.example.com",
    "UpstashRedisRestUrl": "https://t.upstash.io",
    "UpstashRedisTokenSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:upstash",
    "MeteringBucketName": "operator-metering",
}


def evaluate(expr: Any, template: dict[str, Any], params: dict[str, str]) -> Any:
    """A condition's value for `params` (Equals, Not, And, Or, Condition, Ref, Join)."""
    if not isinstance(expr, dict):
        return expr
    ((name, arg),) = expr.items()
    if name == "Ref":
        spec = template["Parameters"].get(arg, {})
        value = str(params.get(arg, spec.get("Default", "")))
        return value.split(",") if spec.get("Type") == "CommaDelimitedList" else value
    if name == "Condition":
        return evaluate(template["Conditions"][arg], template, params)
    args = [evaluate(a, template, params) for a in arg]
    if name == "Fn::Join":
        return args[0].join(args[1])
    return {
        "Fn::Equals": lambda: str(args[0]) == str(args[1]),
        "Fn::Not": lambda: not args[0],
        "Fn::And": lambda: all(args),
        "Fn::Or": lambda: any(args),
    }[name]()


def billed_resources(template: dict[str, Any], params: dict[str, str]) -> Counter[str]:
    """Resource types that bill while idle, counted for `params` (alarms by metric)."""
    conditions = {k: bool(evaluate(v, template, params)) for k, v in template["Conditions"].items()}
    counts: Counter[str] = Counter()
    for resource in template["Resources"].values():
        if not conditions.get(resource.get("Condition"), True):
            continue
        kind = resource["Type"]
        if kind == "AWS::CloudWatch::Alarm":
            metrics = resource["Properties"].get("Metrics")
            counts[kind] += sum(1 for m in metrics if "MetricStat" in m) if metrics else 1
        else:
            counts[kind] += 1
    return counts


def monthly_cost(choice: str, counts: Counter[str], args: argparse.Namespace) -> dict[str, float]:
    p, wakes = PRICES, HOURS / args.metering_hours
    lines = {
        "KMS keys": counts["AWS::KMS::Key"] * p["kms_key_month"],
        "Secrets Manager (stack's own)": counts["AWS::SecretsManager::Secret"] * p["secret_month"],
        "Secrets Manager (Upstash token)": p["secret_month"],
        "CloudWatch alarms (per metric)": counts["AWS::CloudWatch::Alarm"] * p["alarm_metric_month"],
        "CloudWatch dashboard": counts["AWS::CloudWatch::Dashboard"] * p["dashboard_month"],
        "NAT gateway": counts["AWS::EC2::NatGateway"] * p["nat_gateway_hour"] * HOURS,
        "public IPv4 (NAT)": counts["AWS::EC2::EIP"] * p["public_ipv4_hour"] * HOURS,
        "Upstash Redis": p["upstash_idle_month"],
    }
    if choice == "aurora":
        awake_h = (p["metering_run_s"] + p["aurora_auto_pause_s"]) / 3600
        lines["Aurora storage"] = args.storage_gb * p["aurora_storage_gb_month"]
        lines["Aurora owner secret (RDS-managed)"] = p["secret_month"]
        lines["Aurora compute while paused"] = 0.0
        lines["Aurora woken by metering"] = wakes * awake_h * p["aurora_min_acu_awake"] * p["aurora_acu_hour"]
    else:
        awake_h = (p["metering_run_s"] + p["neon_suspend_s"]) / 3600
        lines["Postgres storage (Neon)"] = args.storage_gb * p["neon_storage_gb_month"]
        lines["Postgres compute while suspended"] = 0.0
        lines["Postgres woken by metering"] = wakes * awake_h * p["neon_min_cu_awake"] * p["neon_cu_hour"]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metering-hours", type=float, default=6, help="MeteringSchedule interval (default 6)")
    parser.add_argument("--storage-gb", type=float, default=1.0, help="database storage in GB (default 1)")
    args = parser.parse_args()
    template = load_template(ROOT / "template.yaml")
    print("inputs (USD, us-east-1 list prices):")
    for name, value in PRICES.items():
        print(f"  {name:<28} {value}")
    print(f"  {'metering every (h)':<28} {args.metering_hours}\n  {'database storage (GB)':<28} {args.storage_gb}")
    totals = {}
    for label, choice in SCENARIOS.items():
        counts = billed_resources(template, {**COMMON, **choice})
        lines = monthly_cost(choice["Database"], counts, args)
        totals[label] = sum(lines.values())
        print(f"\n{label}")
        kinds = ("KMS::Key", "SecretsManager::Secret", "CloudWatch::Alarm", "NatGateway", "EC2::EIP", "DBCluster")
        print("  counted: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k.endswith(kinds)))
        for name, cost in lines.items():
            print(f"  {name:<36} {cost:8.2f}")
        print(f"  {'total per month':<36} {totals[label]:8.2f}")
    base = totals[next(iter(SCENARIOS))]
    print("\nidle cost per month, ratio to external:")
    for label, total in totals.items():
        print(f"  {label:<48} {total:8.2f}  x{total / base:.1f}")


if __name__ == "__main__":
    main()
