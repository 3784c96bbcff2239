"""The models a deployment offers: real providers from env, the offline demo locally, and test scripts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from personal_agent.errors import InvalidInput
from personal_agent.settings import Settings, get_settings

if TYPE_CHECKING:
    from pydantic_ai.models import Model

ModelFactory = Callable[[], "Model"]

_registered: dict[str, tuple[str, ModelFactory]] = {}


@dataclass(frozen=True)
class ModelInfo:
    id: str
    label: str
    provider: str
    offline_demo: bool = False


def register_model(model_id: str, factory: ModelFactory, label: str | None = None) -> None:
    """Offer an extra model by id (tests register scripted `FunctionModel`s; never reaches the network)."""
    _registered[model_id] = (label or model_id, factory)


def unregister_model(model_id: str) -> None:
    _registered.pop(model_id, None)


def available_models(settings: Settings | None = None) -> list[ModelInfo]:
    """Every model a run may name, `auto` first."""
    settings = settings or get_settings()
    models = [ModelInfo("auto", "Auto (best available)", "auto")]
    if settings.openai_api_key:
        models += [
            ModelInfo("openai:gpt-4o-mini", "GPT-4o mini", "openai"),
            ModelInfo("openai:gpt-4o", "GPT-4o", "openai"),
        ]
    if settings.anthropic_api_key:
        models.append(ModelInfo("anthropic:claude-sonnet-4-0", "Claude Sonnet 4", "anthropic"))
    if settings.openai_compatible_base_url:
        models.append(ModelInfo("openai-compatible:default", "OpenAI-compatible endpoint", "openai-compatible"))
    if settings.is_local:
        models.append(ModelInfo("offline:demo", "Offline demo model (no key needed)", "offline", offline_demo=True))
    models += [ModelInfo(mid, label, mid.split(":", 1)[0]) for mid, (label, _) in _registered.items()]
    return models


def resolve_model_id(requested: str | None, settings: Settings | None = None) -> str:
    """The concrete model id a run will use; `auto` picks the first real provider, else the demo locally."""
    settings = settings or get_settings()
    offered = {m.id for m in available_models(settings)}
    requested = requested or settings.default_model
    if requested != "auto":
        if requested not in offered:
            raise InvalidInput(f"model {requested!r} is not available here", code="unknown_model")
        return requested
    for info in available_models(settings)[1:]:
        return info.id
    raise InvalidInput("no model is configured: set a provider key", code="no_model_available")


def build_model(model_id: str, settings: Settings | None = None) -> Model:
    """The pydantic-ai model for an id. Provider SDKs are imported here, inside the workers only."""
    settings = settings or get_settings()
    if model_id in _registered:
        return _registered[model_id][1]()
    if model_id == "offline:demo":
        from personal_agent.models.demo import demo_model

        return demo_model()
    if model_id.startswith("openai-compatible:"):
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        name = model_id.split(":", 1)[1]
        provider = OpenAIProvider(
            base_url=settings.openai_compatible_base_url, api_key=settings.openai_api_key or "none"
        )
        return OpenAIChatModel(name, provider=provider)
    from pydantic_ai.models import infer_model

    return infer_model(model_id)
