"""A run emitter on a run of its own (fresh ids, no database row): for the tests of event batching."""

from __future__ import annotations

import uuid

from personal_agent.engine.emitter import RunEmitter
from personal_agent.spec.run_spec import RunSpec


def scratch_emitter() -> RunEmitter:
    spec = RunSpec(
        run_id=uuid.uuid4(),
        org_id=uuid.uuid4(),
        user_id=None,
        chat_id=uuid.uuid4(),
        model="m",
        instructions="",
        mode="inline",
    )
    return RunEmitter(spec)
