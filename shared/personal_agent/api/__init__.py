"""The HTTP API (FastAPI). Routers parse, authorize and delegate; logic lives in the library."""

from personal_agent.fastpaths import fastapi_v1_probe

fastapi_v1_probe.install()
