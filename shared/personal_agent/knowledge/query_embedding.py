"""A search query's vector: embedded in-process where the embedder is installed (the dev server, the workers), or
by the ingest function on AWS, whose layer has it (the API layer leaves wordllama, numpy and pydantic-ai out)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from personal_agent.aws_clients import aws_client
from personal_agent.errors import ServiceUnavailable
from personal_agent.knowledge.embedding_catalog import EmbeddingModelInfo
from personal_agent.settings import get_settings

MAX_QUERY_CHARS = 1000


async def query_vector(info: EmbeddingModelInfo, text: str) -> tuple[list[float], int]:
    """The query's vector and the input tokens embedding it took (the ledger's figure)."""
    function = get_settings().knowledge_function
    if not function:
        from personal_agent.knowledge.embedders import embed_query_counted

        return await embed_query_counted(info, text)
    return await asyncio.to_thread(_invoke, function, info, text)


def _lambda() -> Any:
    return aws_client("lambda")


def _invoke(function: str, info: EmbeddingModelInfo, text: str) -> tuple[list[float], int]:
    payload = json.dumps({"pa_embed_query": {"model": info.id, "text": text[:MAX_QUERY_CHARS]}})
    response = _lambda().invoke(FunctionName=function, InvocationType="RequestResponse", Payload=payload.encode())
    body = json.loads(response["Payload"].read() or b"{}")
    vector = body.get("vector") if isinstance(body, dict) else None
    if response.get("FunctionError") or not isinstance(vector, list) or len(vector) != info.dim:
        raise ServiceUnavailable("the search query could not be embedded; try again", code="embedder_unavailable")
    tokens = body.get("input_tokens")
    return [float(x) for x in vector], tokens if isinstance(tokens, int) and tokens >= 0 else 0


async def embed_for_invoke(event: dict[str, Any]) -> dict[str, Any]:
    """The ingest function's answer to the API's `pa_embed_query` invoke."""
    from personal_agent.knowledge.embedders import embed_query_counted
    from personal_agent.knowledge.embedding_catalog import model_info

    request = event["pa_embed_query"]
    info = model_info(str(request["model"]))
    vector, tokens = await embed_query_counted(info, str(request["text"])[:MAX_QUERY_CHARS])
    return {"model": info.id, "vector": vector, "input_tokens": tokens}
