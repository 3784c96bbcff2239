"""The one place a run's pydantic-ai models are built: every model passes the classification gate here,
and BYOK keys are decrypted here only (inside the run worker or the steps function).

Keys are bound to endpoints: the platform's OPENAI_API_KEY / ANTHROPIC_API_KEY go only to a model the
catalog marked `platform_key` (no base_url, no BYOK key), i.e. the platform's own endpoint. Any other
model gets its org's BYOK key or a placeholder, never the platform's key, not even through the SDKs'
environment fallback. A BYOK key opens only for the endpoint it was bound to (`governance/keys.py`), and a model
at its own base_url is called through a client pinned to the address checked as it is built
(`models/provider_address.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from personal_agent.errors import AppError
from personal_agent.governance.tiers import enforce_classification
from personal_agent.models.catalog import registered_factory
from personal_agent.secret_env import ensure_secrets_loaded
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import ModelRef, RunSpec

if TYPE_CHECKING:
    from uuid import UUID

    import httpx2
    from pydantic_ai.models import Model

NO_KEY = "none"
"""Sent where a model has no key of its own (keyless local servers): the SDKs then skip their env lookup."""


class PlatformKeyRefused(AppError):
    """A model asked for the platform's key somewhere other than the platform's own endpoint."""

    status = 403
    code = "platform_key_refused"


async def _api_key(org_id: UUID, ref: ModelRef, platform_key: str | None) -> str:
    """The org's BYOK key; the platform's key only for a platform-key model at the platform's endpoint; else none."""
    if ref.key_id is not None:
        from personal_agent.governance.keys import decrypt_key, endpoint_of

        return await decrypt_key(org_id, ref.key_id, endpoint_of(ref.kind, ref.base_url))
    if ref.platform_key:
        if ref.base_url is not None:  # the spec validator refuses this too; never trust one check with a secret
            raise PlatformKeyRefused(f"model {ref.id!r} may not use the platform key at another endpoint")
        return platform_key or NO_KEY
    return NO_KEY


async def _client(ref: ModelRef) -> httpx2.AsyncClient | None:
    """For a model at its own base_url: an HTTP client pinned to the address checked now (None: the SDK's own
    client, for the platform's endpoints, which the operator configured)."""
    if ref.base_url is None:
        return None
    from personal_agent.models.provider_address import check_base_url, run_client

    return run_client(ref.base_url, await check_base_url(ref.base_url))


async def build_one(org_id: UUID, ref: ModelRef, required_tier: int) -> Model:
    """One model, after the gate."""
    enforce_classification(required_tier, ref.tier, ref.id)
    ensure_secrets_loaded()  # platform keys come from Secrets Manager on AWS, fetched on first use
    settings = get_settings()
    factory = registered_factory(ref.id)
    if factory is not None:
        return factory()
    if ref.kind == "offline":
        from personal_agent.models.demo import demo_model

        return demo_model()
    from pydantic_ai.settings import ModelSettings

    limits = ModelSettings(max_tokens=ref.max_output_tokens)  # what a budget reservation assumes
    if ref.kind in ("openai", "openai-compatible"):
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        client = await _client(ref)  # checked before the key is opened: a refused address never gets it
        key = await _api_key(org_id, ref, settings.openai_api_key if ref.kind == "openai" else None)
        provider = OpenAIProvider(base_url=ref.base_url, api_key=key, http_client=client)
        return OpenAIChatModel(ref.model_name, provider=provider, settings=limits)
    if ref.kind == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        client = await _client(ref)
        key = await _api_key(org_id, ref, settings.anthropic_api_key)
        anthropic = AnthropicProvider(api_key=key, base_url=ref.base_url, http_client=client)
        return AnthropicModel(ref.model_name, provider=anthropic, settings=limits)
    if ref.kind == "bedrock":
        from pydantic_ai.models.bedrock import BedrockConverseModel

        return BedrockConverseModel(ref.model_name, settings=limits)
    raise ValueError(f"unknown model kind {ref.kind!r}")


async def build_run_model(spec: RunSpec) -> Model:
    """The run's model: its primary with a FallbackModel chain over the snapshotted fallbacks."""
    chain = spec.model_chain or (
        ModelRef(id=spec.model, provider=spec.model.split(":", 1)[0], kind="registered", tier=0, model_name=spec.model),
    )
    models = [await build_one(spec.org_id, ref, spec.routing_tier) for ref in chain]
    if len(models) == 1:
        return models[0]
    from pydantic_ai.models.fallback import FallbackModel

    return FallbackModel(*models)
