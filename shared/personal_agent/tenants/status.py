"""`pa tenants status`: every tenant's stack — status, version, last deploy, outputs — beside its file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from personal_agent.tenants.params import TenantFile
from personal_agent.tenants.stacks import VERSION_TAG, cloudformation, tenant_stacks


@dataclass(frozen=True)
class TenantStatus:
    tenant: str
    stack_name: str
    status: str  # the stack's status, or NOT_DEPLOYED
    version: str = ""
    last_deploy: str = ""
    has_file: bool = True
    outputs: dict[str, str] = field(default_factory=dict)


def _status(tenant: str, stack: dict[str, Any], has_file: bool) -> TenantStatus:
    tags = {t["Key"]: t["Value"] for t in stack.get("Tags", [])}
    when = stack.get("LastUpdatedTime") or stack.get("CreationTime")
    return TenantStatus(
        tenant,
        stack["StackName"],
        stack["StackStatus"],
        tags.get(VERSION_TAG, ""),
        when.isoformat() if when else "",
        has_file,
        {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])},
    )


def tenants_status(tenants: dict[str, TenantFile]) -> list[TenantStatus]:
    """One row per tenant with a file or a stack (a stack without a file is shown too)."""
    regions = {t.region for t in tenants.values()} or {None}
    rows: dict[str, TenantStatus] = {}
    for region in regions:
        for name, stack in tenant_stacks(cloudformation(region)).items():
            if name in tenants and tenants[name].region != region:
                continue
            rows[name] = _status(name, stack, name in tenants)
    for name, tenant in tenants.items():
        rows.setdefault(name, TenantStatus(name, tenant.stack_name, "NOT_DEPLOYED"))
    return [rows[name] for name in sorted(rows)]
