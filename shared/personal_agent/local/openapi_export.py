"""Write the checked-in OpenAPI document the web chat's types are generated from (`make openapi`):

    python -m personal_agent.local.openapi_export [path]   # default: frontend/src/api/openapi.json

It is the document `pa dev` serves: the API and the event streams, in local mode (so with the dev login).
Keys are sorted and indented so a change to the contract reads as a small diff; tests/unit/test_openapi_drift.py
fails when the file differs from what the app says.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from personal_agent.local.dev_app import create_dev_app
from personal_agent.settings import get_settings

DOCUMENT = Path("frontend/src/api/openapi.json")


def render(document: dict[str, Any]) -> str:
    """The document as it is checked in: sorted keys, two-space indents, a final newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def dev_document() -> dict[str, Any]:
    """The dev server's document: the API app plus the SSE relay and the AG-UI endpoint it mounts."""
    return create_dev_app().openapi()


def main(argv: list[str] | None = None) -> None:
    """Write the document (local mode, whatever PA_ENV says: the dev login's routes are part of it)."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0]) if args else DOCUMENT
    os.environ["PA_ENV"] = "local"
    get_settings.cache_clear()
    target.write_text(render(dev_document()), encoding="utf-8")
    print(f"wrote {target}")  # noqa: T201 - a command-line tool's one line of output


if __name__ == "__main__":
    main()
