"""The ranking stages without a database: near-duplicate passages leave a result, the reranker interface (Bedrock's
Rerank request as the API takes it, the offline token-match scorer), when full text matches any two words, and
the router model's rewrite of a follow-up (a FunctionModel stands in for the router)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from personal_agent.knowledge import dedup
from personal_agent.knowledge.chunk_store import any_word
from personal_agent.knowledge.chunking import Chunk, embedding_text
from personal_agent.knowledge.query_rewrite import rewrite_query, user_turns
from personal_agent.knowledge.ranking import Retrieval, refine
from personal_agent.knowledge.rerank import (
    BedrockReranker,
    TokenMatchReranker,
    content_words,
    passage_windows,
    reranker,
)

HANDBOOK = "Expense reports are due within thirty days of the purchase, with every receipt attached to the claim."


def test_near_identical_passages_are_kept_once_in_rank_order() -> None:
    items = [HANDBOOK, "Parking is free for visitors.", HANDBOOK.upper(), HANDBOOK + " Thanks."]
    assert dedup.distinct(items, str) == [HANDBOOK, "Parking is free for visitors."]
    edited = HANDBOOK.replace("thirty", "30")  # one word of 17 changed: 3 of its 3-grams, Jaccard 0.7
    assert dedup.distinct([HANDBOOK, edited], str) == [HANDBOOK, edited]
    assert dedup.distinct(["a b c d", "a b c e"], str) == ["a b c d", "a b c e"]  # half their 3-grams differ


async def test_refine_dedups_then_cuts_to_k_and_reranks_when_asked() -> None:
    items = [HANDBOOK, HANDBOOK, "Receipts for hotel stays go to finance.", "The cafeteria opens at noon."]
    kept = await refine("receipts", items, 2, Retrieval(dedup=True, reranker="none"), str)
    assert kept == [HANDBOOK, "Receipts for hotel stays go to finance."]
    both = await refine("receipts", items, 4, Retrieval(dedup=False, reranker="none"), str)
    assert both == items
    reranked = await refine("when does the cafeteria open", items[2:], 2, Retrieval(reranker="tokens"), str)
    assert reranked[0] == "The cafeteria opens at noon."


async def test_the_token_match_reranker_prefers_the_passage_that_answers() -> None:
    scores = await TokenMatchReranker().scores(
        "how many days to hand in expense receipts?", ["The cafeteria opens at noon.", HANDBOOK]
    )
    assert scores[1] > scores[0]


async def test_the_offline_reranker_votes_with_tokens_and_with_the_best_sentence_window() -> None:
    mixed = (
        "Office › Facilities\n\nThe cafeteria opens at noon. Parking is free for visitors. The gym closes at nine. "
        "Badges are renewed every year. Printers are on every floor."
    )
    windows = passage_windows(mixed, 3)
    assert (
        windows[0]
        == "Office › Facilities\nThe cafeteria opens at noon. Parking is free for visitors. The gym closes at nine."
    )
    assert len(windows) == 3 and all(w.startswith("Office › Facilities\n") for w in windows)
    assert passage_windows("One sentence only.", 3) == ["One sentence only."]
    assert content_words("How do I hand in my expense receipts?") == "hand expense receipts"
    ranker = reranker("auto")
    assert isinstance(ranker, TokenMatchReranker)  # WordLlama is installed here
    signals = await ranker.signals("how many days to hand in expense receipts?", [mixed, HANDBOOK])
    assert len(signals) == 2 and all(len(s) == 2 and s[1] > s[0] for s in signals)


def test_the_bedrock_reranker_sends_the_rerank_api_request() -> None:
    ranker = reranker("amazon.rerank-v1:0", "eu-central-1")
    assert isinstance(ranker, BedrockReranker) and ranker.name == "bedrock:amazon.rerank-v1:0"
    request = ranker.request("receipts?", ["one", "two"])
    config = request["rerankingConfiguration"]["bedrockRerankingConfiguration"]
    assert config["modelConfiguration"]["modelArn"] == (
        "arn:aws:bedrock:eu-central-1::foundation-model/amazon.rerank-v1:0"
    )
    assert config["numberOfResults"] == 2 and request["queries"][0]["textQuery"]["text"] == "receipts?"
    assert [s["inlineDocumentSource"]["textDocument"]["text"] for s in request["sources"]] == ["one", "two"]
    assert reranker("none") is None
    with pytest.raises(ValueError):
        reranker("cross-encoder")


def test_full_text_matches_any_two_words_unless_the_query_uses_operators() -> None:
    assert any_word("how do I strip the right end of a string?")
    assert not any_word('"exact phrase" only') and not any_word("cats -dogs") and not any_word("cats or dogs")
    assert any_word("well-known rules")


def test_what_is_embedded_carries_the_title_and_section_path() -> None:
    chunk = Chunk("Receipts within thirty days.", 5, None, "Handbook › Expenses")
    assert embedding_text("Travel policy", chunk.section, chunk.text) == (
        "Travel policy › Handbook › Expenses\n\nReceipts within thirty days."
    )
    assert embedding_text("Handbook", "Handbook › Expenses", "x") == "Handbook › Expenses\n\nx"  # not twice
    assert embedding_text(None, None, "x") == "x"


def _router(seen: list[str]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(p.content for m in messages for p in getattr(m, "parts", []) if isinstance(p, UserPromptPart))
        seen.append(str(prompt))
        tool = info.output_tools[0].name
        return ModelResponse(parts=[ToolCallPart(tool, json.dumps({"query": "dict.popitem return value"}))])

    return FunctionModel(answer)


async def test_a_follow_up_is_rewritten_from_the_earlier_turns() -> None:
    seen: list[str] = []
    history = ["What does setdefault do on a dictionary?", "and popitem?"]
    rewritten = await rewrite_query(_router(seen), history, "and popitem?")
    assert rewritten == "dict.popitem return value"
    assert "- What does setdefault do on a dictionary?" in seen[0] and seen[0].endswith("Last message: and popitem?")


async def test_no_history_or_a_failing_router_keeps_the_query() -> None:
    seen: list[str] = []
    assert await rewrite_query(_router(seen), [], "expense deadline") == "expense deadline" and seen == []

    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("router down")

    assert await rewrite_query(FunctionModel(broken), ["earlier"], "and the second one?") == "and the second one?"


def test_user_turns_are_read_from_a_runs_messages() -> None:
    messages: list[Any] = [
        ModelRequest(parts=[UserPromptPart("first question")]),
        ModelResponse(parts=[]),
        ModelRequest(parts=[UserPromptPart("and the second one?")]),
    ]
    assert user_turns(messages) == ["first question", "and the second one?"]
