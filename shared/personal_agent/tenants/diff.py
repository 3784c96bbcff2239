"""`pa tenants diff NAME`: what a deploy would change in one tenant's stack — a change set, never executed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from personal_agent.tenants.params import TenantFile
from personal_agent.tenants.stacks import VERSION_TAG, cloudformation, create_change_set, tenant_stacks
from personal_agent.tenants.template_source import DeployableTemplate


@dataclass(frozen=True)
class TenantDiff:
    tenant: str
    stack_name: str
    new_stack: bool
    parameters: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # name -> (now, after)
    resources: list[dict[str, Any]] = field(default_factory=list)
    failure: str = ""

    @property
    def changes_anything(self) -> bool:
        return self.new_stack or bool(self.parameters or self.resources)


def diff_tenant(tenant: TenantFile, template: DeployableTemplate, version: str, poll: float = 5.0) -> TenantDiff:
    """Make a change set for the tenant's stack, read it, and delete it (and the empty stack a CREATE leaves)."""
    client = cloudformation(tenant.region)
    existing = tenant_stacks(client).get(tenant.name)
    stack_name = existing["StackName"] if existing else tenant.stack_name
    current = {p["ParameterKey"]: p.get("ParameterValue") for p in (existing or {}).get("Parameters", [])}
    changed = {k: (current.get(k), v) for k, v in tenant.parameters.items() if current.get(k) != v}
    name = "pa-diff-" + datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")
    tags = {**tenant.tags, VERSION_TAG: version}
    change_set = create_change_set(
        client, stack_name, template.arguments, tenant.parameters, tags, existing is not None, name, poll
    )
    client.delete_change_set(ChangeSetName=change_set.id, StackName=stack_name)
    if existing is None:
        client.delete_stack(StackName=change_set.stack_id)  # the REVIEW_IN_PROGRESS placeholder
    return TenantDiff(
        tenant.name,
        stack_name,
        existing is None,
        {} if change_set.empty else changed,
        [] if change_set.empty else change_set.changes,
        change_set.failure,
    )
