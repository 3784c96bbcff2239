"""The embedding models a deployment offers match what its packages can run."""

from __future__ import annotations

from personal_agent.knowledge.embedding_catalog import BEDROCK_TITAN, OFFLINE, available_models
from personal_agent.settings import Settings


def test_aws_offers_bedrock_and_never_the_offline_model_its_layers_leave_out() -> None:
    ids = [m.id for m in available_models(Settings(environment="aws"))]
    assert BEDROCK_TITAN.id in ids
    assert OFFLINE.id not in ids


def test_local_offers_the_offline_model_and_not_bedrock() -> None:
    ids = [m.id for m in available_models(Settings(environment="local"))]
    assert OFFLINE.id in ids
    assert BEDROCK_TITAN.id not in ids
