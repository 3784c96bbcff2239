"""Shared parts of the streaming benchmark: figures and the report, the stack, a tenant and its runs."""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # `tests.live_server`, `functions.stream` and `bench.*` live beside `shared/`


RETENTION_S = 600
MAXLEN = 100_000
PAD = "x" * 48  # payloads of about 120 bytes, the size of a TEXT_MESSAGE_CONTENT event
SENT = b'"sent_ns":'


# ---- figures -------------------------------------------------------------------------------------


def percentile(samples: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100)."""
    ordered = sorted(samples)
    k = (len(ordered) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms" if ns < 1e7 else f"{ns / 1e6:.1f} ms"


@dataclass
class Report:
    sections: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)

    def section(self, title: str) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = []
        self.sections.append((title, rows))
        return rows

    def show(self, header: str) -> None:
        print(f"\n{header}")
        for title, rows in self.sections:
            if not rows:
                continue
            print(f"\n{title}")
            width = max(len(name) for name, _ in rows)
            for name, value in rows:
                print(f"  {name:<{width}}  {value}")


def latency_row(samples: list[int], floor: list[int] | None = None) -> str:
    p50, p99 = percentile(samples, 50), percentile(samples, 99)
    text = f"p50 {ms(p50):>9}   p99 {ms(p99):>9}   max {ms(max(samples)):>9}   n={len(samples)}"
    if floor:
        text += f"   p50 {p50 / percentile(floor, 50):.1f}x / p99 {p99 / percentile(floor, 99):.1f}x the floor"
    return text


def payload(seq: int) -> str:
    """A CUSTOM event stamped with its send time, taken as late as possible before it is published."""
    value = f'{{"pad":"{PAD}","seq":{seq},"sent_ns":{time.perf_counter_ns()}}}'
    return f'{{"type":"CUSTOM","name":"bench","value":{value}}}'


def sent_ns(data: bytes | str) -> int | None:
    """The send stamp of a bench event (None for any other event, such as the terminal one)."""
    raw = data.encode() if isinstance(data, str) else data
    start = raw.find(SENT)
    if start < 0:
        return None
    start += len(SENT)
    return int(raw[start : raw.find(b"}", start)])


TERMINAL = '{"type":"RUN_FINISHED","threadId":"bench","runId":"bench","outcome":{"type":"success"}}'


# ---- the stack, a tenant, runs ---------------------------------------------------------------------


@dataclass(frozen=True)
class Tenant:
    org_id: uuid.UUID
    user_id: uuid.UUID
    slug: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@contextmanager
def local_stack(data_dir: Path) -> Iterator[Any]:
    """The embedded Postgres and Valkey on free ports with their data in `data_dir` (no moto: not needed)."""
    import pydantic_ai.models

    from personal_agent.local.isolation import isolate_process
    from personal_agent.local.stack import LocalStack
    from personal_agent.settings import Settings, get_settings

    pydantic_ai.models.ALLOW_MODEL_REQUESTS = False  # the bench's models are function models; no provider is called
    isolate_process(
        data_dir,
        PA_ENV="local",
        PA_LOG_LEVEL="WARNING",
        # The load test's clients are one user; the per-user stream cap protects a real account, not this.
        PA_SSE_MAX_CONNECTIONS_PER_USER="100000",
    )
    stack = LocalStack(Settings())
    try:
        yield stack.start(with_aws=False)
    finally:
        stack.stop()
        get_settings.cache_clear()


def make_tenant() -> Tenant:
    """An org with one user, inserted as the database owner, and a dev token for that user."""
    import psycopg

    from personal_agent.identity.dev_issuer import DevIssuer
    from personal_agent.settings import get_settings

    settings = get_settings()
    slug, subject = f"bench-{uuid.uuid4().hex[:8]}", f"bench-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as conn:
        org = conn.execute("INSERT INTO orgs (slug, name) VALUES (%s, %s) RETURNING id", [slug, slug]).fetchone()
        user = conn.execute(
            "INSERT INTO users (issuer, subject, email) VALUES (%s, %s, %s) RETURNING id",
            [settings.dev_issuer, subject, f"{subject}@example.test"],
        ).fetchone()
        assert org and user
        conn.execute(
            "INSERT INTO memberships (org_id, user_id, roles) VALUES (%s, %s, %s)", [org[0], user[0], ["user"]]
        )
    token = DevIssuer.from_settings(settings).mint(subject=subject, orgs=[slug], roles=("user",))
    return Tenant(org[0], user[0], slug, token)


def insert_running_runs(tenant: Tenant, count: int) -> list[uuid.UUID]:
    """Run rows in status `running`, so the relay streams them (nothing drives them but this bench)."""
    import psycopg

    ids = [uuid.uuid4() for _ in range(count)]
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"], autocommit=True) as conn, conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO runs (id, org_id, user_id, status, mode, spec, started_at)"
            " VALUES (%s, %s, %s, 'running', 'inline', '{}'::jsonb, now())",
            [(run_id, tenant.org_id, tenant.user_id) for run_id in ids],
        )
    return ids
