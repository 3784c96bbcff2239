"""Governance in code: trust tiers and the classification gate, model choice, keys, budgets, routing."""
