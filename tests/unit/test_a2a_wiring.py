"""A2A on AWS: CloudFront sends `/api/v1/a2a/*` (the cards and the JSON-RPC endpoints, `message/stream` streamed)
to the stream function, whose app serves them; the stream layer carries what a2a-sdk's JSON-RPC server imports
beyond the API layer, and the API layer (held under its size budget) still carries none of a2a-sdk."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from personal_agent.local.lambda_registry import load_template

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = (ROOT / "Makefile").read_text()
RESOURCES = load_template(ROOT / "template.yaml")["Resources"]
# Top-level modules whose distribution is not named by the module (the `google` namespace is shared).
GOOGLE = {
    "protobuf": "protobuf",
    "_upb": "protobuf",
    "api": "googleapis-common-protos",
    "rpc": "googleapis-common-protos",
    "type": "googleapis-common-protos",
    "longrunning": "googleapis-common-protos",
    "api_core": "google-api-core",
    "auth": "google-auth",
}


def _variable(name: str) -> str:
    match = re.search(rf"^{name} := ((?:.*\\\n)*.*)$", MAKEFILE, re.MULTILINE)
    assert match, name
    return " ".join(match.group(1).replace("\\\n", " ").split())


def _behaviour(path: str) -> dict[str, object]:
    config = RESOURCES["WebDistribution"]["Properties"]["DistributionConfig"]
    (found,) = [b for b in config["CacheBehaviors"] if b["PathPattern"] == path]
    return dict(found)


def test_cloudfront_sends_a2a_to_the_stream_function_before_the_api() -> None:
    behaviour = _behaviour("/api/v1/a2a/*")
    assert behaviour["TargetOriginId"] == "stream"
    assert {"GET", "POST"} <= set(behaviour["AllowedMethods"])  # type: ignore[arg-type]
    assert behaviour["Compress"] is False  # SSE goes out as written
    config = RESOURCES["WebDistribution"]["Properties"]["DistributionConfig"]
    order = [b["PathPattern"] for b in config["CacheBehaviors"]]
    assert order.index("/api/v1/a2a/*") < order.index("/api/*")


def test_the_stream_app_serves_the_a2a_routes() -> None:
    """Asked without a token, the stream app answers its own 401 for the card and the endpoint (no route: 404)."""
    from starlette.testclient import TestClient

    from personal_agent.stream_app import create_stream_app

    with TestClient(create_stream_app()) as client:
        card = client.get("/api/v1/a2a/assistant/.well-known/agent-card.json")
        rpc = client.post("/api/v1/a2a/assistant", json={"jsonrpc": "2.0", "id": 1, "method": "GetTask"})
        other = client.post("/api/v1/a2a-nope/assistant", json={})
    assert [card.status_code, rpc.status_code, other.status_code] == [401, 401, 404]
    assert card.json()["code"] == rpc.json()["code"] == "missing_token"


_BLOCKER = """
import importlib.abc, importlib.metadata as md, json, sys
allowed = set(sys.argv[1].split())
google = json.loads(sys.argv[2])
owners = md.packages_distributions()

def shipped(dists):
    return any(d.lower().replace("_", "-") in allowed for d in dists)

class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        parts = name.split(".")
        if parts[0] == "google":
            if len(parts) > 1 and google.get(parts[1], "google-" + parts[1]) not in allowed:
                raise ModuleNotFoundError(name)
        elif parts[0] in owners and not shipped(owners[parts[0]]):
            raise ModuleNotFoundError(name)
        return None

sys.meta_path.insert(0, Blocker())
import a2a.server.routes, a2a.server.routes.jsonrpc_dispatcher, a2a.server.request_handlers, a2a.types
import a2a.server.events, a2a.compat.v0_3.jsonrpc_adapter, a2a.compat.v0_3.conversions, a2a.utils.errors
import a2a.server.request_handlers.response_helpers, a2a.utils.constants
print("imported")
"""


def test_the_stream_layer_carries_what_a2a_imports_beyond_the_api_layer() -> None:
    uv = ROOT / ".tools" / "bin" / "uv"  # `make bootstrap` installs it; `make build` exports the layers with it
    export = [str(uv), "export", "--frozen", "--no-dev", "--extra", "server", "--no-emit-project", "--no-hashes"]
    export += ["--no-header"]  # the server's dependencies are the project's `server` extra (the layers export it)
    prune = [arg for name in _variable("API_LAYER_PRUNE").split() for arg in ("--prune", name)]
    api = subprocess.run([*export, "--no-annotate", *prune], capture_output=True, text=True, check=True, cwd=ROOT)
    api_layer = {re.split(r"[=; ]", line)[0].lower() for line in api.stdout.splitlines() if "==" in line}
    stream_layer = set(_variable("STREAM_LAYER_ONLY").split("|"))
    assert "a2a-sdk" not in api_layer and "a2a-sdk" in stream_layer
    shipped = api_layer | stream_layer | {"a2a-sdk"}  # a2a-sdk itself: the package under test
    # The server parts the A2A routes use import with nothing but the two layers' distributions installed (an
    # optional import they try, httpx's CLI, SQLAlchemy, is refused here as it would be missing on Lambda).
    check = subprocess.run(
        [sys.executable, "-c", _BLOCKER, " ".join(sorted(shipped)), json.dumps(GOOGLE)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert check.returncode == 0 and "imported" in check.stdout, check.stderr[-2000:]
