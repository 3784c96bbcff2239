"""Per-user memories: saved by the agent's `remember` tool, edited in Settings, recalled into later runs."""
