"""Files dropped into a chat's composer: images for vision models, documents for the chat's knowledge."""
