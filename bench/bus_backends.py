"""Bus backends side by side over loopback: Redis/Valkey over TCP vs Upstash REST (via the test bridge).

Figures are printed, not asserted. The bridge runs on a thread of this process, so the REST numbers
include its share of the GIL; a real Upstash endpoint adds network round trips on top.

    .venv/bin/python bench/bus_backends.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from personal_agent.bus.base import EventBus  # noqa: E402
from personal_agent.bus.redis_streams import RedisStreamsBus  # noqa: E402
from personal_agent.bus.upstash import UpstashBus  # noqa: E402
from personal_agent.local.valkey import start_embedded_valkey  # noqa: E402
from tests.upstash_bridge import running_bridge  # noqa: E402

N = 300
TOKEN = "bench-token"


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def _measure(name: str, bus: EventBus) -> None:
    stream = f"pa:bench:run:{uuid.uuid4()}"
    publish: list[float] = []
    for i in range(N):
        t = time.perf_counter()
        await bus.publish(stream, f'{{"i": {i}}}', retention_seconds=600, maxlen=10_000)
        publish.append(time.perf_counter() - t)

    # Publish -> tailing reader: one event at a time, the reader already waiting in `read`.
    tail_stream = f"pa:bench:run:{uuid.uuid4()}"
    cursor = await bus.publish(tail_stream, "start", retention_seconds=600, maxlen=10_000)
    delivery: list[float] = []
    for i in range(N // 3):
        reader = asyncio.create_task(bus.read(tail_stream, cursor, block_ms=5_000))
        await asyncio.sleep(0.002)  # let the reader start waiting (a bench, not a test)
        t = time.perf_counter()
        await bus.publish(tail_stream, str(i), retention_seconds=600, maxlen=10_000)
        entries = await reader
        delivery.append(time.perf_counter() - t)
        cursor = entries[-1].id

    t = time.perf_counter()
    entries = await bus.read(stream, "0", block_ms=0, count=N)
    read_all = time.perf_counter() - t
    assert len(entries) == N
    await bus.close()
    print(
        f"{name:<8} publish p50 {_pct(publish, 0.5):6.2f} ms  p99 {_pct(publish, 0.99):6.2f} ms | "
        f"publish->reader p50 {_pct(delivery, 0.5):6.2f} ms  p99 {_pct(delivery, 0.99):6.2f} ms | "
        f"read {N} entries {read_all * 1000:6.2f} ms  (mean publish {statistics.mean(publish) * 1000:.2f} ms)"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server, redis_url = start_embedded_valkey(Path(tmp))
        try:
            with running_bridge(redis_url, TOKEN) as bridge_url:
                asyncio.run(_measure("redis", RedisStreamsBus(redis_url)))
                asyncio.run(_measure("upstash", UpstashBus(bridge_url, TOKEN)))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
