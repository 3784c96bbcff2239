"""The one place a run's pydantic-ai models are built: every model passes the classification gate here,
and BYOK keys are decrypted here only (inside the run worker or the steps function)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from personal_agent.governance.tiers import enforce_classification
from personal_agent.models.catalog import registered_factory
from personal_agent.runs.spec import ModelRef, RunSpec
from personal_agent.secret_env import ensure_secrets_loaded
from personal_agent.settings import get_settings

if TYPE_CHECKING:
    from uuid import UUID

    from pydantic_ai.models import Model


async def _api_key(org_id: UUID, ref: ModelRef, platform_key: str | None) -> str | None:
    if ref.key_id is not None:
        from personal_agent.governance.keys import decrypt_key

        return await decrypt_key(org_id, ref.key_id)
    return platform_key


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
    if ref.kind in ("openai", "openai-compatible"):
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        key = await _api_key(org_id, ref, settings.openai_api_key)
        provider = OpenAIProvider(base_url=ref.base_url, api_key=key or "none")
        return OpenAIChatModel(ref.model_name, provider=provider)
    if ref.kind == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        key = await _api_key(org_id, ref, settings.anthropic_api_key)
        return AnthropicModel(ref.model_name, provider=AnthropicProvider(api_key=key))
    if ref.kind == "bedrock":
        from pydantic_ai.models.bedrock import BedrockConverseModel

        return BedrockConverseModel(ref.model_name)
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
