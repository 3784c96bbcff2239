"""Every module the API function imports on a request (each lazy router group, and what they import then) loads
with only what the API layer ships: the Makefile's API_LAYER_PRUNE leaves pydantic-ai, the model SDKs, the embedder
and the parsers out, so a route that imported one at module import would fail on AWS with an ImportError that no
local test sees (the dev server has everything installed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from personal_agent.api.router_groups import GROUPS

ROOT = Path(__file__).resolve().parents[2]
# Import names of the distributions the API layer prunes (and what only they pulled in), as Python sees them.
PRUNED_IMPORTS = {
    "pydantic-ai-slim": "pydantic_ai",
    "genai-prices": "genai_prices",
    "mcp": "mcp",
    "wordllama": "wordllama",
    "numpy": "numpy",
    "tokenizers": "tokenizers",
    "pgvector": "pgvector",
    "pypdf": "pypdf",
    "python-docx": "docx",
    "uvicorn": "uvicorn",
    "uvloop": "uvloop",
    "httptools": "httptools",
    "hiredis": "hiredis",
    "a2a-sdk": "a2a",
    "openpyxl": "openpyxl",
    "python-pptx": "pptx",
    "rapidocr-onnxruntime": "rapidocr_onnxruntime",
}
BLOCK = """
import importlib.abc, sys
class Pruned(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError(f"{{name}} is not in the API layer")
        return None
sys.meta_path.insert(0, Pruned())
"""


def test_the_pruned_list_matches_the_makefile() -> None:
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    found = re.search(r"^API_LAYER_PRUNE := (.+)$", makefile, re.M)
    assert found is not None
    assert set(found.group(1).split()) - {"boto3"} == set(PRUNED_IMPORTS)  # boto3: Lambda's runtime has it


def test_every_router_group_imports_without_what_the_api_layer_prunes() -> None:
    modules = [f"{group.package}.{group.module}" for group in GROUPS]
    code = BLOCK.format(blocked=sorted(set(PRUNED_IMPORTS.values()))) + (
        "import importlib, json\n"
        "failed = {}\n"
        f"for name in {modules!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as exc:\n"
        "        failed[name] = str(exc)\n"
        "print(json.dumps(failed))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PA_ENV": "aws", "PYTHONPATH": f"{ROOT}:{ROOT / 'shared'}"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}
