"""Fast paths: the only places that patch or read a library's internals to make a hot path cheaper.

Each module patches one thing, names what it relies on, and is left off (never broken) by a library that moved:

- `stream_pull_lock`: pydantic-ai's stream pulls take a fast-acquire lock (no event-loop round trip per chunk).
- `direct_model_events`: a model request's events are read straight from the model's stream when nothing in
  the run watches, wraps or can cut short pydantic-ai's event stream.
- `fastapi_v1_probe`: FastAPI's "is this a `pydantic.v1` model?" probes answer without importing `pydantic.v1`.
- `lazy_routers`: the API Lambda imports each router when a request first needs it.

"Left off" is what an upgrade must not do silently: `tests/unit/test_fastpaths.py` checks that each one is in
effect (the patched function installed, the lock not yielding, the skipped path taken, the router not imported).
What each one saved is measured by `bench/` and written down in `bench/PROFILE.md`.
"""
