"""A run's life outside the engine: launch, drivers, recovery, durable steps, approval decisions, child runs."""
