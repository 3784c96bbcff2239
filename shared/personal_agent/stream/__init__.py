"""The SSE relay: a run's Redis stream (and the user's feed) as text/event-stream, resumable by entry id."""
