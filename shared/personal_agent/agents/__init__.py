"""Agents: named, versioned configurations (instructions, model, tools, knowledge, delegates) runs launch with."""
