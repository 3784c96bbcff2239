"""Sub-agents (issue 16): child runs a parent's `delegate` call starts. `specs` (a child's RunSpec, never wider
than its parent's), `service` (driving children inline, resuming a parent when its children ended, the cancel
cascade and the budget stop of a tree), `views` (a run's children with status and cost)."""
