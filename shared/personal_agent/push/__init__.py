"""Web Push (RFC 8030/8291/8292): browsers where a person asked to hear of their runs' pending approvals."""
