"""First-party tools and the registry the engine builds a run's toolset from."""
