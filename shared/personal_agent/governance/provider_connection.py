""" "Test connection" for an org's provider: ask its endpoint for its model list, with a short timeout, through the
same address checks and pinned client a run's model uses, and say in plain words what happened.

No key is sent: a provider key opens only where a model is built (the run worker), never in the API. An endpoint
that answers but wants its key is `needs_key` (reached; the run will send the key). What the endpoint answered is
never echoed beyond its status and the model ids it lists: an error body may repeat a key or internal detail."""

from __future__ import annotations

import time
from typing import Any, Literal
from urllib.parse import urlsplit
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput, NotFound
from personal_agent.governance import provider_store
from personal_agent.models.provider_address import ProviderAddressRefused, check_base_url, pinned_client

TIMEOUT_SECONDS = 5.0
MAX_MODELS = 100
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com/v1"}
Status = Literal["ok", "needs_key", "error"]


def _result(status: Status, message: str, started: float, models: list[str] | None = None) -> dict[str, Any]:
    elapsed = round((time.monotonic() - started) * 1000)
    return {"ok": status == "ok", "status": status, "message": message, "models": models or [], "elapsed_ms": elapsed}


def _model_ids(payload: Any) -> list[str] | None:
    """The ids of an OpenAI-style (or Anthropic) model list, or None for anything else."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    return [str(m["id"]) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)][:MAX_MODELS]


def _judge(status_code: int, payload: Any, host: str, has_key: bool) -> tuple[Status, str, list[str]]:
    """What an answer to GET /models means, in plain words."""
    if status_code in (401, 403) and has_key:
        note = "it wants the provider key, which is opened only inside a run: send it a message to check the key"
        return "needs_key", f"reached {host}; {note}", []
    if status_code in (401, 403):
        return "error", f"{host} refused the request (HTTP {status_code}): it needs a key", []
    if 300 <= status_code < 400:
        return "error", f"{host} redirected (HTTP {status_code}); a provider is called without redirects", []
    if not 200 <= status_code < 300:
        return "error", f"{host} answered HTTP {status_code} to GET /models", []
    models = _model_ids(payload)
    if models is None:
        return "error", f"{host} answered, but not with a model list: check the base URL (often it ends in /v1)", []
    return "ok", f"connected to {host}: it lists {len(models)} model{'' if len(models) == 1 else 's'}", models


async def _ask_models(kind: str, base_url: str, has_key: bool, started: float) -> dict[str, Any]:
    import httpx2

    try:
        address = await check_base_url(base_url)  # before anything else reads the URL: it may be malformed
    except ProviderAddressRefused as exc:
        return _result("error", exc.message, started)
    host = urlsplit(base_url.strip()).netloc
    headers = {"anthropic-version": "2023-06-01"} if kind == "anthropic" else {}
    try:
        async with pinned_client(base_url, address) as client:
            response = await client.get(f"{base_url.rstrip('/')}/models", headers=headers, timeout=TIMEOUT_SECONDS)
    except httpx2.TimeoutException:
        return _result("error", f"{host} did not answer within {TIMEOUT_SECONDS:.0f} s", started)
    except httpx2.HTTPError as exc:
        return _result("error", f"could not connect to {host} ({type(exc).__name__})", started)
    try:
        payload = response.json() if response.is_success else None
    except ValueError:
        payload = None
    status, message, models = _judge(response.status_code, payload, host, has_key)
    return _result(status, message, started, models)


async def check_endpoint(kind: str, base_url: str | None, has_key: bool = False) -> dict[str, Any]:
    """What an endpoint of `kind` at `base_url` (None: the kind's default) answers now, before or after it is saved
    as a provider; 422 `connection_test_unsupported` for Bedrock (AWS credentials, no endpoint), `base_url_required`
    for an OpenAI-compatible one without a base_url."""
    started = time.monotonic()
    if kind == "bedrock":
        raise InvalidInput(
            "Bedrock is called with the platform's AWS credentials: there is no endpoint to test",
            code="connection_test_unsupported",
        )
    url = (base_url or "").strip() or DEFAULT_BASE_URLS.get(kind)
    if url is None:
        raise InvalidInput("an OpenAI-compatible provider needs base_url", code="base_url_required")
    return await _ask_models(kind, url, has_key, started)


async def check_connection(org_id: UUID, provider_id: UUID) -> dict[str, Any]:
    """What the saved provider's endpoint answers now (ok / needs_key / error, with a message that names no
    secret); 404 `provider_not_found`, 422 as `check_endpoint`."""
    async with org_transaction(org_id) as conn:
        row = await provider_store.get(conn, provider_id)
    if row is None:
        raise NotFound("provider not found", code="provider_not_found")
    return await check_endpoint(row["kind"], row["base_url"], row["key_id"] is not None)
