"""Receiving a webhook: verify it (Standard Webhooks signature, or the workflow's bearer token), then claim
its `webhook-id` and start the run once. Nothing is written before the request is verified.

Limits: the body is at most `MAX_BODY_BYTES` (24 KiB, UTF-8) so the rendered prompt fits a run's first
message; a JSON body nests at most `MAX_JSON_DEPTH` arrays/objects deep (422 `body_too_deep`: deeper would exhaust
the parser's recursion when a template reads `{{body.…}}`); the `webhook-timestamp` must be within 5 minutes of
now; idempotency keys are at most 256 characters.
"""

from __future__ import annotations

import asyncio
import hmac
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import AppError, Conflict, Forbidden, InvalidInput, NotFound, Unauthorized
from personal_agent.workflows import delivery_store, ratelimit
from personal_agent.workflows.credentials import BEARER_PREFIX, hash_token, unseal_cached
from personal_agent.workflows.prompts import TriggerValues
from personal_agent.workflows.store import Credential, Workflow, get_row, live_credentials, workflow_org
from personal_agent.workflows.triggers import Accepted, start_delivery

MAX_BODY_BYTES = 24 * 1024
TOLERANCE_SECONDS = 5 * 60
MAX_KEY_CHARS = 256
MAX_JSON_DEPTH = 64


class PayloadTooLarge(AppError):
    status = 413
    code = "payload_too_large"


def check_size(length: int) -> None:
    if length > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"the webhook body is larger than {MAX_BODY_BYTES} bytes", limit=MAX_BODY_BYTES)


def json_depth(text: str) -> int:
    """How deeply arrays and objects nest in `text`, counted without parsing it (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def check_depth(text: str) -> None:
    """Refuse a JSON body (one that starts like JSON) nested deeper than `MAX_JSON_DEPTH`."""
    if text.lstrip()[:1] in ("[", "{") and json_depth(text) > MAX_JSON_DEPTH:
        raise InvalidInput(
            f"the webhook's JSON nests deeper than {MAX_JSON_DEPTH} levels", code="body_too_deep", limit=MAX_JSON_DEPTH
        )


def _verify_signature(workflow: Workflow, secrets: list[Credential], headers: Mapping[str, str], body: str) -> str:
    """The verified `webhook-id`; 401 with what was wrong otherwise (blocking: a KMS call on a cache miss)."""
    from standardwebhooks import Webhook, WebhookVerificationError

    msg_id, stamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
    if not msg_id or not stamp or not headers.get("webhook-signature"):
        raise Unauthorized(
            "a signed webhook needs webhook-id, webhook-timestamp and webhook-signature", code="missing_signature"
        )
    try:
        sent = int(stamp)
    except ValueError:
        raise Unauthorized("webhook-timestamp must be seconds since the epoch", code="invalid_timestamp") from None
    if abs(time.time() - sent) > TOLERANCE_SECONDS:
        raise Unauthorized("webhook-timestamp is more than 5 minutes from now", code="timestamp_out_of_tolerance")
    for secret in secrets:
        assert secret.sealed is not None
        opened = unseal_cached(secret.id, workflow.org_id, workflow.id, secret.sealed)
        try:
            Webhook(opened).verify(body, dict(headers), json_parse=False)
        except (WebhookVerificationError, ValueError):
            continue
        return msg_id
    raise Unauthorized("the webhook signature does not match", code="invalid_signature")


def _verify_bearer(tokens: list[Credential], authorization: str) -> None:
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token.startswith(BEARER_PREFIX):
        raise Unauthorized("use the workflow's bearer token (pa_whk_…) or sign the request", code="invalid_token")
    digest = hash_token(token)
    if not any(t.token_hash and hmac.compare_digest(t.token_hash, digest) for t in tokens):
        raise Unauthorized("the bearer token is not valid for this workflow", code="invalid_token")


async def _verify(workflow: Workflow, headers: Mapping[str, str], body: str) -> str:
    """Verify the request; return its idempotency key (a fresh one when a bearer sender gives none)."""
    async with org_transaction(workflow.org_id) as conn:
        if headers.get("webhook-signature"):
            signing = await live_credentials(conn, workflow.id, "signing_secret")
            return await asyncio.to_thread(_verify_signature, workflow, signing, headers, body)
        tokens = await live_credentials(conn, workflow.id, "bearer_token")
    if "authorization" not in headers:
        raise Unauthorized(
            "sign the request (Standard Webhooks) or send the workflow's bearer token", code="missing_credentials"
        )
    _verify_bearer(tokens, headers["authorization"])
    return headers.get("webhook-id") or headers.get("idempotency-key") or f"request:{uuid.uuid4()}"


async def _claim(workflow: Workflow, key: str) -> Accepted | delivery_store.Delivery:
    """Win the key (a Delivery to start) or return the run an earlier request with the same key started."""
    for _ in range(3):
        delivery = await delivery_store.claim(workflow.org_id, workflow.id, "webhook", key)
        if delivery.won:
            return delivery
        if delivery.status != "released" and delivery.run_id is None:
            waited = await delivery_store.wait_for_run(workflow.org_id, delivery.id)
            if waited is None:
                continue  # the first request failed and gave the key back: this one may take it
            delivery = waited
        if delivery.run_id is not None:
            return Accepted(delivery.run_id, delivery.status, duplicate=True)
    raise Conflict("a request with this webhook-id is still being started", code="delivery_in_progress", retry_after=5)


async def receive_webhook(workflow_id: UUID, headers: Mapping[str, str], body: bytes) -> Accepted:
    """Verify, deduplicate, rate-limit and start (headers with lower-case names)."""
    check_size(len(body))
    org_id = await workflow_org(workflow_id)
    workflow = None
    if org_id is not None:
        async with org_transaction(org_id) as conn:
            workflow = await get_row(conn, workflow_id)
    if workflow is None:
        raise NotFound("workflow not found", code="workflow_not_found")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("the webhook body must be UTF-8 text", code="body_not_utf8") from None
    check_depth(text)
    key = await _verify(workflow, headers, text)
    if len(key) > MAX_KEY_CHARS:
        raise InvalidInput(f"the idempotency key is longer than {MAX_KEY_CHARS} characters", code="key_too_long")
    if not workflow.webhook_enabled:
        raise Forbidden("webhooks are turned off for this workflow", code="webhook_disabled")
    claimed = await _claim(workflow, key)
    if isinstance(claimed, Accepted):
        return claimed
    try:
        await ratelimit.take(workflow.org_id, workflow.id, workflow.rate_limit_per_minute)
    except BaseException:
        await delivery_store.release(workflow.org_id, claimed.id)
        raise
    values = TriggerValues(
        trigger="webhook",
        time=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        workflow_name=workflow.name,
        body=text,
        webhook_id=key,
    )
    return await start_delivery(workflow, claimed, values, keep_failures=False)
