"""Readiness (hard dependencies) and soft dependency reports."""
