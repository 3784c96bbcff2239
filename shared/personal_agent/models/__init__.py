"""Model choice: the catalogue of models this deployment offers and how each is built."""
