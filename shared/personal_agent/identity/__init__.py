"""Identity and tenancy: who is calling, in which org, with which roles."""
