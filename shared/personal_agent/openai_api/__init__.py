"""`/v1`: the OpenAI-compatible API (Chat Completions, Responses, models) in front of governed agents."""
