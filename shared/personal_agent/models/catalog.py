"""The models a deployment offers an org: platform models from env, the org's own providers, the
offline demo locally, and models registered by tests. Each carries its provider's trust tier, its price
and whether it is called with the platform's key (only ever at the platform's own endpoint)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from uuid import UUID

from personal_agent.secret_env import ensure_secrets_loaded
from personal_agent.settings import Settings, get_settings

if TYPE_CHECKING:
    from pydantic_ai.models import Model

ModelFactory = Callable[[], "Model"]


@dataclass(frozen=True)
class ModelInfo:
    """One model a run may use, with what governance and ranking need to know about it."""

    id: str
    label: str
    provider: str
    kind: str
    tier: int
    model_name: str
    locality: str = "remote"
    tags: tuple[str, ...] = ()
    quality: int = 10
    input_price: float | None = None
    output_price: float | None = None
    offline_demo: bool = False
    base_url: str | None = field(default=None, repr=False)
    key_id: UUID | None = None
    platform_key: bool = False  # the platform's key, at the platform's endpoint, at the platform's price
    context_window: int = 128_000
    """Tokens the model reads in one request (history, instructions, tools and its answer together)."""


@dataclass(frozen=True)
class _Registered:
    info: ModelInfo
    factory: ModelFactory


_registered: dict[str, _Registered] = {}


def register_model(
    model_id: str,
    factory: ModelFactory,
    label: str | None = None,
    *,
    tier: int = 2,
    tags: tuple[str, ...] = (),
    quality: int = 10,
    provider: str | None = None,
    locality: str = "local",
    input_price: float | None = None,
    output_price: float | None = None,
    context_window: int = 128_000,
) -> None:
    """Offer an extra model by id (tests register scripted `FunctionModel`s; never reaches the network).
    Prices (USD per million tokens) apply to responses whose model name is `model_id`."""
    info = ModelInfo(
        model_id,
        label or model_id,
        provider or model_id.split(":", 1)[0],
        "registered",
        tier,
        model_id,
        locality=locality,
        tags=tags,
        quality=quality,
        input_price=input_price,
        output_price=output_price,
        context_window=context_window,
    )
    _registered[model_id] = _Registered(info, factory)


def unregister_model(model_id: str) -> None:
    _registered.pop(model_id, None)


def registered_factory(model_id: str) -> ModelFactory | None:
    entry = _registered.get(model_id)
    return entry.factory if entry else None


# What the platform serves with its own keys, by the key that turns them on (prices: USD per million tokens).
OPENAI_PLATFORM_MODELS = (
    ModelInfo(
        "openai:gpt-4o-mini",
        "GPT-4o mini",
        "openai",
        "openai",
        1,
        "gpt-4o-mini",
        tags=("cheap", "fast"),
        quality=11,
        input_price=0.15,
        output_price=0.6,
        platform_key=True,
    ),
    ModelInfo(
        "openai:gpt-4o",
        "GPT-4o",
        "openai",
        "openai",
        1,
        "gpt-4o",
        tags=("frontier", "vision"),
        quality=16,
        input_price=2.5,
        output_price=10.0,
        platform_key=True,
    ),
)
ANTHROPIC_PLATFORM_MODELS = (
    ModelInfo(
        "anthropic:claude-sonnet-4-0",
        "Claude Sonnet 4",
        "anthropic",
        "anthropic",
        1,
        "claude-sonnet-4-0",
        tags=("frontier", "coding", "reasoning"),
        quality=17,
        input_price=3.0,
        output_price=15.0,
        platform_key=True,
        context_window=200_000,
    ),
)
OFFLINE_DEMO_MODEL = ModelInfo(
    "offline:demo",
    "Demo model",  # the web chat adds "(offline demo)"; its answers sign "Demo model (offline)"
    "offline",
    "offline",
    2,
    "demo",
    locality="local",
    tags=("vision",),  # it reads an image's type and size: enough to try attachments offline
    quality=1,
    input_price=0.0,  # runs in this process: known to cost nothing (budgets count it as free)
    output_price=0.0,
    offline_demo=True,
)


def platform_models(settings: Settings | None = None) -> list[ModelInfo]:
    """Models the platform provides from its own keys (env / Secrets Manager)."""
    ensure_secrets_loaded()  # platform keys come from Secrets Manager on AWS, fetched on first use
    settings = settings or get_settings()
    models: list[ModelInfo] = []
    if settings.openai_api_key:
        models += OPENAI_PLATFORM_MODELS
    if settings.anthropic_api_key:
        models += ANTHROPIC_PLATFORM_MODELS
    if settings.openai_compatible_base_url:
        models.append(
            ModelInfo(
                "openai-compatible:default",
                "OpenAI-compatible endpoint",
                "openai-compatible",
                "openai-compatible",
                2,
                settings.openai_compatible_model,
                locality="local",
                quality=8,
                base_url=settings.openai_compatible_base_url,
                context_window=32_000,  # local servers often serve small windows: assume one
            )
        )
    if settings.is_local:
        models.append(OFFLINE_DEMO_MODEL)
    return models


def platform_price(kind: str, model_name: str) -> tuple[float | None, float | None]:
    """The platform's own price for a model it serves with its key ((None, None): genai-prices decides)."""
    for info in platform_models():
        if info.platform_key and info.kind == kind and info.model_name == model_name:
            return info.input_price, info.output_price
    return None, None


def registered_models() -> list[ModelInfo]:
    return [entry.info for entry in _registered.values()]
