"""The durable driver: Step Functions tasks that advance runs with the shared engine."""
