"""The HTTP API (FastAPI). Routers parse, authorize and delegate; logic lives in the library."""
