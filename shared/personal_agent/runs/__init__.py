"""Runs: the RunSpec, the launch chokepoint, the drivers and the run store."""
