"""Projects (issue 38, item 2): chats grouped with shared instructions, a default agent, a collection, memories."""
