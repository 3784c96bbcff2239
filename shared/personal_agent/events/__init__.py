"""What the platform tells a client outside the AG-UI standard events: every CUSTOM event's value as one pydantic
model (`events.custom`). The ground floor under the bus: it imports only pydantic, so the API function's cold start
and every layer above can read it."""
