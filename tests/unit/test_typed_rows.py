"""A store's read hands back a typed row (a frozen dataclass named for what it holds), not a `dict[str, Any]`
(issue 29 item 3): its callers read attributes that mypy checks. Here for the stores already converted."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from types import ModuleType, UnionType
from typing import Any

import pytest

from personal_agent.approvals import store as approval_store
from personal_agent.chats import store as chat_store
from personal_agent.runs import store as runs_store
from personal_agent.workflows import delivery_store, output_delivery_store, output_store, schedule_store
from personal_agent.workflows import store as workflow_store

TYPED_STORES = (
    chat_store,
    workflow_store,
    delivery_store,
    schedule_store,
    output_store,
    output_delivery_store,
    approval_store,
    runs_store,
)


def _untyped(annotation: Any) -> bool:
    """True when the annotation is, or holds, a `dict[str, Any]` (a row whose columns nobody checks)."""
    if typing.get_origin(annotation) is dict and typing.get_args(annotation)[1:] == (Any,):
        return True
    return any(_untyped(arg) for arg in typing.get_args(annotation))


def _reads(module: ModuleType) -> list[tuple[str, Any]]:
    functions = inspect.getmembers(module, inspect.iscoroutinefunction)
    return [(name, fn) for name, fn in functions if not name.startswith("_") and fn.__module__ == module.__name__]


def _row_types(annotation: Any) -> list[type]:
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return [annotation]
    if isinstance(annotation, UnionType) or typing.get_origin(annotation) in (list, tuple, typing.Union):
        return [t for arg in typing.get_args(annotation) for t in _row_types(arg)]
    return []


@pytest.mark.parametrize("module", TYPED_STORES, ids=lambda m: m.__name__)
def test_no_store_function_returns_an_untyped_row(module: ModuleType) -> None:
    untyped = [name for name, fn in _reads(module) if _untyped(typing.get_type_hints(fn)["return"])]
    assert untyped == [], f"{module.__name__} returns dict[str, Any] from {untyped}"


@pytest.mark.parametrize("module", TYPED_STORES, ids=lambda m: m.__name__)
def test_the_rows_are_frozen_dataclasses(module: ModuleType) -> None:
    rows = {t for _, fn in _reads(module) for t in _row_types(typing.get_type_hints(fn)["return"])}
    assert rows, f"{module.__name__} returns no row type"
    for row in rows:
        params = getattr(row, "__dataclass_params__")  # noqa: B009 (not in the dataclass stubs)
        assert params.frozen, f"{row.__name__} can be changed after it is read"
