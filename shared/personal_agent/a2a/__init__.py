"""A2A (Agent2Agent): an agent card per agent and the JSON-RPC methods, on the same runs and auth."""
