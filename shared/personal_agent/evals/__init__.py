"""Feedback on answers, evaluation datasets, scorers and evaluation runs (docs/evals.md)."""
