"""template.yaml against the channels code (issue 34): the channels function serves exactly the inbound routes its
router has, on the HTTP API without the JWT authorizer (each request proves itself with its channel's signature);
it hands its runs to itself by the name its environment gives (allowed to invoke it, failures kept), and the API
hands it a channel's run decided in the web chat; it opens the channels' sealed secrets, seals the e-mail channel's
answer key and sends e-mail; SES's receipt rule stores mail where the code reads it, then invokes the
function; the handler module is an allowed entry point."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from personal_agent.channels import ses_inbound
from personal_agent.channels.handler import create_channels_app
from personal_agent.channels.routes import router
from personal_agent.local.lambda_registry import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE: dict[str, Any] = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
FUNCTION = RESOURCES["ChannelsFunction"]["Properties"]


def _get_att(value: Any) -> str:
    """`!GetAtt A.B` as the loader gives it (a dotted string or a pair) -> "A.B"."""
    att = value["Fn::GetAtt"]
    return att if isinstance(att, str) else ".".join(att)


def _policies() -> list[Any]:
    found = []
    for policy in FUNCTION["Policies"]:
        if isinstance(policy, dict) and "Fn::If" in policy:
            policy = policy["Fn::If"][1]
        found.append(policy)
    return found


def test_the_function_serves_every_inbound_route_open_on_the_http_api() -> None:
    routes = {
        (e["Properties"]["Method"], e["Properties"]["Path"]): e["Properties"]
        for e in FUNCTION["Events"].values()
        if e["Type"] == "HttpApi"
    }
    served = {(method, route.path) for route in router.routes for method in route.methods}  # type: ignore[attr-defined]
    assert set(routes) == served
    for props in routes.values():
        assert props["ApiId"] == {"Ref": "HttpApi"} and props["Auth"] == {"Authorizer": "NONE"}
    app_paths = set(create_channels_app().openapi()["paths"])
    assert {path for _, path in served} <= app_paths


def test_runs_are_handed_to_the_function_itself_by_name_and_failures_are_kept() -> None:
    env = FUNCTION["Environment"]["Variables"]
    assert env["PA_CHANNELS_WORKER_FUNCTION"] == FUNCTION["FunctionName"]
    invokable = [p["LambdaInvokePolicy"]["FunctionName"] for p in _policies() if "LambdaInvokePolicy" in p]
    assert FUNCTION["FunctionName"] in invokable
    on_failure = FUNCTION["EventInvokeConfig"]["DestinationConfig"]["OnFailure"]
    assert on_failure["Type"] == "SQS" and _get_att(on_failure["Destination"]) == "ChannelsDeadLetterQueue.Arn"
    assert FUNCTION["Timeout"] == 900  # a run is followed to its end (the relay's lifetime is under this)


def test_a_run_decided_in_the_web_chat_is_handed_to_the_function_to_follow_into_its_thread() -> None:
    api = RESOURCES["ApiFunction"]["Properties"]
    assert api["Environment"]["Variables"]["PA_CHANNELS_WORKER_FUNCTION"] == FUNCTION["FunctionName"]
    invokable = [p["LambdaInvokePolicy"]["FunctionName"] for p in api["Policies"] if "LambdaInvokePolicy" in p]
    assert FUNCTION["FunctionName"] in invokable


def test_it_seals_the_email_channels_answer_key_at_first_use() -> None:
    statements = [s for p in _policies() if "Statement" in p for s in p["Statement"]]
    sealing = [s for s in statements if "kms:GenerateDataKey" in s["Action"] and isinstance(s["Resource"], dict)]
    assert [_get_att(s["Resource"]) for s in sealing] == ["EnvelopeKey.Arn"]


def test_it_opens_sealed_secrets_and_sends_threaded_email() -> None:
    policies = _policies()
    assert {"KMSDecryptPolicy": {"KeyId": {"Ref": "EnvelopeKey"}}} in policies
    actions = [a for p in policies if "Statement" in p for s in p["Statement"] for a in s["Action"]]
    assert "ses:SendRawEmail" in actions


def test_ses_stores_mail_where_the_function_reads_it_then_invokes_it() -> None:
    rule = RESOURCES["ChannelEmailRule"]["Properties"]["Rule"]
    store, invoke = rule["Actions"]
    assert store["S3Action"] == {"BucketName": {"Ref": "ChannelEmailBucket"}, "ObjectKeyPrefix": ses_inbound.PREFIX}
    assert _get_att(invoke["LambdaAction"]["FunctionArn"]) == "ChannelsFunction.Arn"
    assert invoke["LambdaAction"]["InvocationType"] == "Event"
    assert rule["ScanEnabled"] is True  # the verdicts the code honours (a FAIL is dropped)
    env = FUNCTION["Environment"]["Variables"]
    assert env["PA_CHANNEL_EMAIL_BUCKET"] == {"Fn::If": ["HasInboundEmail", {"Ref": "ChannelEmailBucket"}, ""]}
    assert {"S3ReadPolicy": {"BucketName": {"Ref": "ChannelEmailBucket"}}} in _policies()
    for name in ("ChannelEmailBucket", "ChannelEmailBucketPolicy", "ChannelEmailRuleSet", "ChannelEmailRule"):
        assert RESOURCES[name]["Condition"] == "HasInboundEmail"
    bucket_policy = RESOURCES["ChannelEmailBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    assert bucket_policy["Principal"] == {"Service": "ses.amazonaws.com"}


def test_the_handler_is_an_allowed_entry_point() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"functions.** -> personal_agent.channels.handler"' in pyproject
    source = (ROOT / "functions" / "channels" / "app.py").read_text()
    assert "from personal_agent.channels.handler import handle" in source
