"""`pa dev` with the bench's scripted model registered: `.venv/bin/python bench/scripted_dev.py`.

Everything else is `pa dev` exactly as a user starts it (same env vars: PA_PORT, PA_DATA_DIR, ...).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scripted_model import register  # noqa: E402

if __name__ == "__main__":
    register()
    from personal_agent.cli import main

    sys.exit(main(["dev"]))
