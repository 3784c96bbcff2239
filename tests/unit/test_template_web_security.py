"""template.yaml's web chat and stream function against the security rules the code follows: CloudFront
serves the dev server's Content-Security-Policy, and the SSE relay cannot take the account's concurrency."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from personal_agent.local.lambda_registry import load_template
from personal_agent.local.web_chat import CSP_DIRECTIVES

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]


def _cloudfront_csp() -> tuple[dict[str, list[str]], dict[str, Any]]:
    """The web chat's CSP on AWS as directive -> sources, and the variables its `!Sub` defines."""
    config = RESOURCES["WebSecurityHeaders"]["Properties"]["ResponseHeadersPolicyConfig"]
    csp = config["SecurityHeadersConfig"]["ContentSecurityPolicy"]
    assert csp["Override"] is True
    text, variables = csp["ContentSecurityPolicy"]["Fn::Sub"]
    directives = {}
    for directive in text.split(";"):
        name, *sources = directive.split()
        directives[name] = sources
    return directives, variables


def test_cloudfront_serves_the_web_chat_with_the_dev_servers_csp() -> None:
    directives, _ = _cloudfront_csp()
    assert {name: " ".join(sources) for name, sources in directives.items() if name != "connect-src"} == dict(
        CSP_DIRECTIVES
    )
    behaviour = RESOURCES["WebDistribution"]["Properties"]["DistributionConfig"]["DefaultCacheBehavior"]
    assert behaviour["ResponseHeadersPolicyId"] == {"Ref": "WebSecurityHeaders"}


def test_the_csp_lets_the_web_chat_reach_the_api_the_stream_url_and_the_issuer_only() -> None:
    directives, variables = _cloudfront_csp()
    assert directives["connect-src"] == [
        "'self'",
        "https://${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}",
        "https://${StreamHost}",
        "https://${IssuerHost}",
        # Presigned uploads (chat attachments, knowledge documents) go from the browser to the documents bucket.
        "https://${DocumentsBucket.RegionalDomainName}",
        "https://${DocumentsBucket.DomainName}",
        "${WebConnectSources}",
    ]
    # Hosts only: a CSP source with a path matches that path alone, and the issuer's discovery is below it.
    assert variables["StreamHost"] == {
        "Fn::Select": [2, {"Fn::Split": ["/", {"Fn::GetAtt": "StreamFunctionUrl.FunctionUrl"}]}]
    }
    assert variables["IssuerHost"] == {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "OidcIssuer"}]}]}
    # Extra origins are origins: nothing that could end the directive or widen it to everything.
    pattern = re.compile(TEMPLATE["Parameters"]["WebConnectSources"]["AllowedPattern"])
    for good in ("", "https://auth.example.test", "https://a.example.test https://b.example.test"):
        assert pattern.fullmatch(good), good
    for bad in ("*", "https:", "https://x.test; script-src *", "'unsafe-inline'", "http://x.test", "https://x.test/p"):
        assert not pattern.fullmatch(bad), bad


def test_the_web_chat_turns_dns_prefetch_off() -> None:
    config = RESOURCES["WebSecurityHeaders"]["Properties"]["ResponseHeadersPolicyConfig"]
    headers = {h["Header"]: h["Value"] for h in config["CustomHeadersConfig"]["Items"]}
    assert headers["X-DNS-Prefetch-Control"] == "off"


def test_the_stream_function_has_reserved_concurrency() -> None:
    props = RESOURCES["StreamFunction"]["Properties"]
    condition, reserved, otherwise = props["ReservedConcurrentExecutions"]["Fn::If"]
    assert reserved == {"Ref": "StreamReservedConcurrency"} and otherwise == {"Ref": "AWS::NoValue"}
    assert TEMPLATE["Conditions"][condition] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "StreamReservedConcurrency"}, 0]}]}
    parameter = TEMPLATE["Parameters"]["StreamReservedConcurrency"]
    assert parameter["Type"] == "Number" and int(parameter["Default"]) >= 1
