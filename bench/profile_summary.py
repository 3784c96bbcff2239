"""Top costs from a py-spy raw profile (collapsed stacks, `frame;frame;... count` per line): where the samples
ended (self) and which functions they passed through (inclusive, counted once per stack).

`.venv/bin/python bench/profile_summary.py PROFILE.txt` prints the same summary as `bench/throughput.py --profile`.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^:()]+)(?::\d+)?\)$")
PACKAGES = ("personal_agent", "redis", "psycopg", "uvicorn", "starlette", "fastapi", "pydantic_ai", "ag_ui", "asyncio")


def _name(frame: str) -> str:
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    path = match["file"]
    for package in PACKAGES:
        marker = f"/{package}/"
        if path.startswith(package + "/"):
            break
        if marker in path:
            path = package + "/" + path.split(marker, 1)[1]
            break
    else:
        path = Path(path).name
    return f"{match['func']} ({path})"


def summarize(profile: Path, top: int = 15) -> str:
    """Self and inclusive top-`top` tables as text."""
    own: Counter[str] = Counter()
    through: Counter[str] = Counter()
    total = 0
    for line in profile.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_name(f) for f in stack.split(";") if f]
        if not frames or frames[0].startswith("process "):
            frames = frames[1:] if frames else frames
        total += n
        if frames:
            own[frames[-1]] += n
        for name in set(frames):
            through[name] += n
    if not total:
        return "  (no samples)"
    lines = [f"  {total} samples; self (where the time was spent):"]
    lines += [f"    {100 * n / total:5.1f} %  {name}" for name, n in own.most_common(top)]
    lines.append("  inclusive, project and library frames:")
    ours = [(k, v) for k, v in through.most_common() if k.split("(")[-1].startswith(PACKAGES[:-1])]
    lines += [f"    {100 * n / total:5.1f} %  {name}" for name, n in ours[:top]]
    lines.append("  inclusive, personal_agent frames only:")
    mine = [(k, v) for k, v in ours if "(personal_agent/" in k]
    lines += [f"    {100 * n / total:5.1f} %  {name}" for name, n in mine[:top]]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarize(Path(sys.argv[1])))
