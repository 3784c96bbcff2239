"""Bedrock's reranker against the Rerank API as botocore models it: a real `bedrock-agent-runtime` client behind
botocore's Stubber (no network; moto has no Rerank), which checks the request against the service's own shapes,
and the answer's `results[].index` / `relevanceScore` read back onto the passages (a passage the answer leaves
out scores 0, last), then through the ranking stage's fusion."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from personal_agent.knowledge import rerank
from personal_agent.knowledge.ranking import Retrieval, refine
from personal_agent.knowledge.rerank import MAX_BEDROCK_SOURCES, BedrockReranker, reranker

MODEL_ARN = "arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0"
PASSAGES = [
    "Parking: the car park closes at ten.",
    "Expenses: claims are due within thirty days, receipts attached.",
    "Travel: book flights through the portal.",
]


@pytest.fixture
def stubbed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubber]:
    client = boto3.client(
        "bedrock-agent-runtime", region_name="us-west-2", aws_access_key_id="k", aws_secret_access_key="s"
    )
    asked: list[str] = []

    def client_for(service: str, **_: Any) -> Any:
        asked.append(service)
        return client

    monkeypatch.setattr(rerank, "aws_client", client_for)
    with Stubber(client) as stubber:
        yield stubber
    assert set(asked) <= {"bedrock-agent-runtime"}
    stubber.assert_no_pending_responses()


def expected_request(query: str, texts: list[str]) -> dict[str, Any]:
    return {
        "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
        "sources": [
            {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}}} for t in texts
        ],
        "rerankingConfiguration": {
            "type": "BEDROCK_RERANKING_MODEL",
            "bedrockRerankingConfiguration": {
                "numberOfResults": len(texts),
                "modelConfiguration": {"modelArn": MODEL_ARN},
            },
        },
    }


async def test_the_request_is_the_rerank_apis_and_scores_land_on_their_passages(stubbed: Stubber) -> None:
    ranker = reranker("cohere.rerank-v3-5:0", "us-west-2")
    assert isinstance(ranker, BedrockReranker)
    # The answer comes best first, by index into the sources; passage 0 is not in it at all.
    answer = {"results": [{"index": 1, "relevanceScore": 0.91}, {"index": 2, "relevanceScore": 0.12}]}
    stubbed.add_response("rerank", answer, expected_request("when are expense claims due?", PASSAGES))
    assert await ranker.signals("when are expense claims due?", PASSAGES) == [[0.0, 0.91, 0.12]]


async def test_at_most_the_apis_limit_of_passages_is_sent_and_the_rest_score_zero(stubbed: Stubber) -> None:
    texts = [f"passage {i}" for i in range(MAX_BEDROCK_SOURCES + 5)]
    answer = {"results": [{"index": 99, "relevanceScore": 0.5}, {"index": 0, "relevanceScore": 0.25}]}
    stubbed.add_response("rerank", answer, expected_request("q", texts[:MAX_BEDROCK_SOURCES]))
    scores = await BedrockReranker("cohere.rerank-v3-5:0", "us-west-2").scores("q", texts)
    assert len(scores) == len(texts) and scores[99] == 0.5 and scores[0] == 0.25
    assert sum(1 for s in scores if s) == 2  # the passages past the limit and those left out of the answer: 0


async def test_the_search_ranking_fuses_bedrocks_order_with_the_first_one(
    stubbed: Stubber, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `ranking.refine` as search calls it: the deployment's PA_KNOWLEDGE_RERANKER names the model."""
    from personal_agent.settings import get_settings

    monkeypatch.setenv("PA_KNOWLEDGE_RERANKER", "cohere.rerank-v3-5:0")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    get_settings.cache_clear()
    try:
        answer = {"results": [{"index": 2, "relevanceScore": 0.97}, {"index": 1, "relevanceScore": 0.4}]}
        stubbed.add_response("rerank", answer, expected_request("book a flight", PASSAGES))
        ranked = await refine("book a flight", PASSAGES, 3, Retrieval(dedup=False), lambda p: p)
    finally:
        get_settings.cache_clear()
    # Fused by reciprocal rank (1/(60 + rank), each order one vote): travel (3rd first, 1st by Bedrock) ties parking
    # (1st first, left out by Bedrock: last) and wins on Bedrock's score; expenses (2nd, 2nd) sums less.
    assert ranked == [PASSAGES[2], PASSAGES[0], PASSAGES[1]]
