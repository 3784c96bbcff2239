"""The embedding models an org may choose, each with its dimension and its provider's trust tier (the same tiers
as chat models: a document's classification must pass the embedder's tier before its text is sent there).
Light: the API imports it; the models themselves are built in `knowledge/embedders.py`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from personal_agent.errors import InvalidInput
from personal_agent.settings import Settings, get_settings

OFFLINE_MODEL = "wordllama:l2_supercat_256"


@dataclass(frozen=True)
class EmbeddingModelInfo:
    id: str
    label: str
    dim: int
    tier: int
    """0 unregulated, 1 regulated, 2 internal (runs inside this deployment or its AWS account)."""
    usd_per_mtok: float | None = None
    """Its price per million input tokens; None: genai-prices prices it (or nobody can: the ledger says unknown)."""


OFFLINE = EmbeddingModelInfo(OFFLINE_MODEL, "WordLlama 256 (offline, ships in the worker)", 256, 2, 0.0)
OPENAI_SMALL = EmbeddingModelInfo("openai:text-embedding-3-small", "OpenAI text-embedding-3-small", 1536, 1)
BEDROCK_TITAN = EmbeddingModelInfo("bedrock:amazon.titan-embed-text-v2:0", "Amazon Titan Text Embeddings v2", 1024, 2)


_registered: dict[str, tuple[EmbeddingModelInfo, Callable[[], Any]]] = {}


def register_embedding_model(info: EmbeddingModelInfo, factory: Callable[[], Any]) -> None:
    """Offer an extra model (tests register pydantic-ai `EmbeddingModel`s that never reach the network)."""
    _registered[info.id] = (info, factory)


def unregister_embedding_model(model_id: str) -> None:
    _registered.pop(model_id, None)


def registered_embedder(model_id: str) -> Callable[[], Any] | None:
    entry = _registered.get(model_id)
    return entry[1] if entry else None


def available_models(settings: Settings | None = None) -> list[EmbeddingModelInfo]:
    """What this deployment offers: the offline model locally (wordllama has no Linux arm64 wheel, so the Lambda
    layers leave it out), OpenAI with the platform key, Bedrock on AWS."""
    settings = settings or get_settings()
    on_aws = settings.environment == "aws"
    models = [*([] if on_aws else [OFFLINE]), *(info for info, _ in _registered.values())]
    if settings.openai_api_key:
        models.append(OPENAI_SMALL)
    if on_aws:
        models.append(BEDROCK_TITAN)
    return models


def model_info(model_id: str) -> EmbeddingModelInfo:
    """The model, or 422 `unknown_embedding_model` if this deployment does not offer it."""
    for info in available_models():
        if info.id == model_id:
            return info
    raise InvalidInput(f"embedding model {model_id!r} is not available here", code="unknown_embedding_model")
