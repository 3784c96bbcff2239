"""Tools a run may call: `registry` (metadata the launch snapshots; light, the API imports it), `deps` (the
`RunDeps` every tool gets as pydantic-ai `deps`), and, for the engine only, `first_party` (the tool functions)
and `toolset` (the pydantic-ai toolset of a run)."""
