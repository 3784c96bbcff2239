"""`pa tenants`: one parameter file per tenant drives that tenant's stack (deploy, status, diff, usage)."""
