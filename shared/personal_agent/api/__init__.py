"""The HTTP API (FastAPI). Routers parse, authorize and delegate; logic lives in the library."""

from personal_agent.api import pydantic_v1_probe

pydantic_v1_probe.install()
