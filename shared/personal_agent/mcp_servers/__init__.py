"""MCP servers an org registers: their rows (`store`), the admin and launch logic (`service`), the MCP client
(`client`) and the pydantic-ai toolsets an engine step builds from a run's snapshot (`toolsets`)."""
