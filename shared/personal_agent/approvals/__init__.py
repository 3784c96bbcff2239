"""Human approval of deferred tool calls, for inline and durable runs alike: `store` (SQL only, what the engine
uses when a run pauses) and `service` (list, decide, expire, and resuming the run on its driver)."""
