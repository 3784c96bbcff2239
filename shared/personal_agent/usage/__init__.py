"""The usage ledger: what every model response cost, per org, user, chat, model and day."""
