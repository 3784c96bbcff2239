"""Stream function: the SSE relay as an ASGI app. On AWS the Lambda Web Adapter runs it under uvicorn
behind a Function URL with RESPONSE_STREAM (Mangum buffers, so it cannot serve SSE)."""

from __future__ import annotations

import os

from personal_agent.stream_app import create_stream_app

app = create_stream_app()


def main() -> None:
    """Serve the relay on $PORT (what the Lambda Web Adapter forwards to)."""
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8080")), log_level="warning")


if __name__ == "__main__":
    main()
