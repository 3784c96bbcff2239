"""Metering for billing: each tenant stack exports its usage per period to the operator (bucket and bus)."""
