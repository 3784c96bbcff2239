"""Which runs online sampling takes: decided by the hash of the run id alone (the same answer every time and
everywhere), none at 0, all at 1, and close to the rate over many runs."""

from __future__ import annotations

from uuid import UUID, uuid5

from personal_agent.spec.sampling import in_sample

NAMESPACE = UUID("6f1c0b7e-1d6a-4f7e-9a53-0d1f2c3b4a59")
RUNS = [uuid5(NAMESPACE, str(n)) for n in range(4000)]


def test_sampling_is_deterministic_and_close_to_the_rate() -> None:
    assert not any(in_sample(r, 0) for r in RUNS) and all(in_sample(r, 1) for r in RUNS)
    taken = [r for r in RUNS if in_sample(r, 0.25)]
    assert taken == [r for r in RUNS if in_sample(r, 0.25)]
    assert 0.22 < len(taken) / len(RUNS) < 0.28
    assert set(taken) <= {r for r in RUNS if in_sample(r, 0.5)}  # a higher rate keeps the runs a lower one took
