"""template.yaml against the `/v1` routes the code serves (issue 32): the web URL's `/v1/*` goes to the stream
function, which serves every `/v1` route (streamed or whole) and may start runs both ways; the API function answers
`/v1` whole on both HTTP APIs (the PAT one too: an OpenAI SDK's api_key is usually a PAT)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from personal_agent.api.router_groups import GROUPS
from personal_agent.local.lambda_registry import load_template
from personal_agent.openai_api.routes import router
from personal_agent.stream_app import create_stream_app

ROOT = Path(__file__).resolve().parents[2]
RESOURCES: dict[str, Any] = load_template(ROOT / "template.yaml")["Resources"]


def test_every_v1_route_is_served_by_the_stream_app_and_lazily_by_the_api() -> None:
    served = {route.path for route in router.routes}
    assert served == {
        "/v1/models",
        "/v1/chat/completions",
        "/v1/responses",
        "/v1/responses/{response_id}",
        "/v1/responses/{response_id}/cancel",
        "/v1/responses/{response_id}/input_items",
    }
    stream_app = create_stream_app()
    for route in router.routes:
        params = {"response_id": "resp_x"} if "{response_id}" in route.path else {}
        assert stream_app.url_path_for(route.name, **params) == route.path.replace("{response_id}", "resp_x")
    assert all(any(group.covers(path) for group in GROUPS) for path in served)


def test_the_web_urls_v1_goes_to_the_stream_function_with_nothing_cached() -> None:
    config = RESOURCES["WebDistribution"]["Properties"]["DistributionConfig"]
    behaviours = {b["PathPattern"]: b for b in config["CacheBehaviors"]}
    v1 = behaviours["/v1/*"]
    assert v1["TargetOriginId"] == "stream" and "POST" in v1["AllowedMethods"] and v1["Compress"] is False
    assert v1["CachePolicyId"] == behaviours["/api/v1/agui/*"]["CachePolicyId"]  # caching disabled
    assert v1["OriginRequestPolicyId"] == behaviours["/api/v1/agui/*"]["OriginRequestPolicyId"]  # Authorization on


def test_the_api_function_answers_v1_on_both_apis_and_the_stream_function_may_start_runs() -> None:
    events = RESOURCES["ApiFunction"]["Properties"]["Events"].values()
    v1 = {e["Properties"]["ApiId"]["Ref"] for e in events if e["Properties"].get("Path") == "/v1/{proxy+}"}
    assert v1 == {"HttpApi", "TokenApi"}
    policies = RESOURCES["StreamFunction"]["Properties"]["Policies"]
    kinds = {next(iter(p)) for p in policies if isinstance(p, dict)}
    assert {"LambdaInvokePolicy", "StepFunctionsExecutionPolicy"} <= kinds  # inline and background runs
