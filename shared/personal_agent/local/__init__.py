"""The local stack: embedded Postgres, Valkey and moto, replaceable one by one with real services."""
