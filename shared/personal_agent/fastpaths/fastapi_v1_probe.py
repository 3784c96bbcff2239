"""Fast path: FastAPI's `pydantic.v1` probes answer without importing `pydantic.v1`.

Patches `fastapi._compat.shared.is_pydantic_v1_model_class` / `is_pydantic_v1_model_instance` (read as globals by
`annotation_is_pydantic_v1`) and `fastapi.encoders.is_pydantic_v1_model_instance` (imported there by name).
FastAPI asks "is this a `pydantic.v1` model?" for every route's response model (and for some values it encodes)
and answers by importing the whole `pydantic.v1` package the first time, although this app has no v1 model. A v1
model class cannot exist before `pydantic.v1` is imported, so these probes answer from `sys.modules` first and
stay exact (the same idea as fastapi/fastapi#16374).

`install()` runs when `personal_agent.api` is imported, before any router registers a route. If FastAPI's
internals move, it leaves them alone (only the cold start gets slower; `tests/unit/test_fastpaths.py` notices).
"""

from __future__ import annotations

import sys
from typing import Any

from fastapi import encoders
from fastapi._compat import shared

_ORIGINAL_CLASS_PROBE = getattr(shared, "is_pydantic_v1_model_class", None)


def is_v1_model_class(cls: Any) -> bool:
    v1 = sys.modules.get("pydantic.v1")
    return v1 is not None and shared.lenient_issubclass(cls, v1.BaseModel)


def is_v1_model_instance(obj: Any) -> bool:
    v1 = sys.modules.get("pydantic.v1")
    return v1 is not None and isinstance(obj, v1.BaseModel)


def installed() -> bool:
    return (
        getattr(shared, "is_pydantic_v1_model_class", None) is is_v1_model_class
        and getattr(encoders, "is_pydantic_v1_model_instance", None) is is_v1_model_instance
    )


def install() -> None:
    """Swap FastAPI's two probes for the `sys.modules`-first ones (idempotent)."""
    if _ORIGINAL_CLASS_PROBE is None or not hasattr(encoders, "is_pydantic_v1_model_instance"):
        return
    shared.is_pydantic_v1_model_class = is_v1_model_class  # read as a global by `annotation_is_pydantic_v1`
    shared.is_pydantic_v1_model_instance = is_v1_model_instance
    encoders.is_pydantic_v1_model_instance = is_v1_model_instance  # `jsonable_encoder` imported it by name
