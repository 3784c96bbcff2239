"""Which of a run's models answered a response, named as the run names its models (`provider:model`, the catalog
id), so a run's `model` and `answered_model` read alike and a fallback that answered shows as itself; and the
provider of a response whose model does not say (the offline demo, a test's function model)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from personal_agent.spec.run_spec import ModelRef, RunSpec


def run_refs(spec: RunSpec) -> tuple[ModelRef, ...]:
    """The models a run may have asked: its chain, then its router."""
    return (*spec.model_chain, *([spec.router_model] if spec.router_model else []))


def stored_refs(spec: dict[str, Any] | None) -> tuple[ModelRef, ...]:
    """`run_refs` of a stored spec (a run row's JSON); an entry that no longer reads as a ModelRef is skipped."""
    spec = spec or {}
    refs = []
    for raw in [*(spec.get("model_chain") or []), *([spec["router_model"]] if spec.get("router_model") else [])]:
        try:
            refs.append(ModelRef.model_validate(raw))
        except ValidationError:
            continue
    return tuple(refs)


def answering_ref(refs: Sequence[ModelRef], model_name: str | None) -> ModelRef | None:
    """The model whose provider-side name is `model_name`: an exact match, else the longest one the response's name
    starts with (providers answer with a dated snapshot: `gpt-4o-2024-08-06` for `gpt-4o`)."""
    if not model_name:
        return None
    exact = next((r for r in refs if r.model_name == model_name), None)
    if exact is not None:
        return exact
    prefixed = [r for r in refs if r.model_name and model_name.startswith(r.model_name + "-")]
    return max(prefixed, key=lambda r: len(r.model_name), default=None)


def answered_model_id(refs: Sequence[ModelRef], model_name: str | None) -> str | None:
    """The catalog id of the model that answered (`offline:demo`, not the provider-side `demo`); the name as it
    came when none of `refs` has it."""
    ref = answering_ref(refs, model_name)
    return ref.id if ref is not None else model_name


def answering_provider(refs: Sequence[ModelRef], model_name: str | None, reported: str | None) -> str | None:
    """The provider of a response: what the response says, else the provider of the model that answered."""
    if reported:
        return reported
    ref = answering_ref(refs, model_name)
    return ref.provider if ref is not None else None
