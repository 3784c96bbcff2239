"""The table `bench/throughput.py` prints: one column per variant (`pa dev` process), medians and percentiles of its
figures, ratios to the first column, the issue's goal beside each row; "n/a" where a variant lacks the route."""

from __future__ import annotations

import os
import platform
from typing import Any

from bench.streaming_support import percentile


def fmt_ms(ns: float) -> str:
    return f"{ns / 1e6:.1f} ms"


def report(servers: list[Any], started: str, load: tuple[float, float], clients: int) -> None:
    """The table of every variant's figures (`Server.figures` of `bench/throughput.py`), ratios to the first."""
    base = servers[0].figures

    def row(name: str, key: str, render: Any, goal: str, higher_better: bool = True) -> None:
        cells = []
        for s in servers:
            if key not in s.figures:
                cells.append("n/a")
                continue
            value = render(s.figures[key])
            ratio = ""
            if s is not servers[0] and key in base:
                b, v = render.raw(base[key]), render.raw(s.figures[key])
                ratio = f" ({v / b:.2f}x)" if b else ""
            cells.append(f"{render.text(value)}{ratio}")
        print(f"  {name:<38} " + " | ".join(f"{c:<22}" for c in cells) + f" goal {goal}")

    class Median:
        def __init__(self, fmt: str) -> None:
            self.fmt = fmt

        def __call__(self, xs: list[float]) -> float:
            return percentile(xs, 50)

        def raw(self, xs: list[float]) -> float:
            return percentile(xs, 50)

        def text(self, v: float) -> str:
            return self.fmt.format(v)

    class Pct(Median):
        def __init__(self, q: float) -> None:
            super().__init__("")
            self.q = q

        def __call__(self, xs: list[float]) -> float:
            return percentile(xs, self.q)

        def raw(self, xs: list[float]) -> float:
            return percentile(xs, self.q)

        def text(self, v: float) -> str:
            return fmt_ms(v)

    class Mean(Median):
        def __call__(self, xs: list[float]) -> float:
            return sum(xs) / len(xs)

        def raw(self, xs: list[float]) -> float:
            return sum(xs) / len(xs)

    print(f"\nThroughput (issue 17), taken {started}; {platform.python_implementation()} {platform.python_version()},")
    print(f"{os.cpu_count()} CPUs, load average {load[0]:.1f} -> {load[1]:.1f}; loopback, pa dev child processes")
    print("  " + " " * 39 + " | ".join(f"{s.dev.label:<22}" for s in servers))
    row("POST, GET events -> first event p50", "first_event", Pct(50), "")
    row("POST, GET events -> first event p95", "first_event", Pct(95), "")
    row("POST /runs/stream -> first event p50", "first_event_one", Pct(50), "<= 10 ms")
    row("POST /runs/stream -> first event p95", "first_event_one", Pct(95), "")
    row("text events/s, one stream (2000)", "rate_long", Median("{:,.0f}"), ">= 6,000")
    row("text events/s, one stream (200)", "rate200", Median("{:,.0f}"), "")
    row(f"runs/s, {clients} clients (POST, GET events)", "runs_per_s", Median("{:.1f}"), "")
    row(f"runs/s, {clients} clients (POST /runs/stream)", "runs_per_s_one", Median("{:.1f}"), ">= 64")
    row("server CPU ms per run, one at a time", "cpu_ms_alone", Median("{:.1f}"), "lower")
    row("server CPU ms per run, 20 at once (GET)", "cpu_ms", Median("{:.1f}"), "lower")
    row("server CPU ms per run, 20 at once (/stream)", "cpu_ms_one", Median("{:.1f}"), "lower")
    row("  + Postgres/Valkey CPU ms per run (/stream)", "stack_cpu_ms_one", Median("{:.1f}"), "lower")
    row("  + this client's CPU ms per run (/stream)", "client_cpu_ms_one", Median("{:.1f}"), "")
    row("events per run", "events_per_run", Median("{:.0f}"), "")
    row("SSE bytes per event", "sizes", Mean("{:.0f}"), "<= 160")
    cells = [f"{s.figures['resume'][0]} of {s.figures['resume'][1]}" for s in servers]
    print(f"  {'Last-Event-ID resume exact':<38} " + " | ".join(f"{c:<22}" for c in cells) + " goal always")
