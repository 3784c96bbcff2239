"""`pa tenants deploy`: one template, each tenant's stack with its own parameters, several at a time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from personal_agent.tenants.params import TenantFile
from personal_agent.tenants.stacks import VERSION_TAG, cloudformation, create_change_set, tenant_stacks, wait_for_stack
from personal_agent.tenants.template_source import DeployableTemplate


@dataclass(frozen=True)
class DeployOutcome:
    tenant: str
    stack_name: str
    action: str  # created | updated | unchanged | failed
    status: str
    reason: str = ""


def deploy_one(
    tenant: TenantFile, template: DeployableTemplate, version: str, existing: dict[str, Any] | None, poll: float
) -> DeployOutcome:
    """Create or update one tenant's stack through a change set; a change set without changes is not executed."""
    client = cloudformation(tenant.region)
    stack_name = existing["StackName"] if existing else tenant.stack_name
    name = "pa-deploy-" + datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")
    tags = {**tenant.tags, VERSION_TAG: version}
    try:
        change_set = create_change_set(
            client, stack_name, template.arguments, tenant.parameters, tags, existing is not None, name, poll
        )
        if change_set.empty:
            client.delete_change_set(ChangeSetName=change_set.id, StackName=stack_name)
            return DeployOutcome(tenant.name, stack_name, "unchanged", existing["StackStatus"] if existing else "")
        if change_set.failure:
            return DeployOutcome(tenant.name, stack_name, "failed", "CHANGE_SET_FAILED", change_set.failure)
        client.execute_change_set(ChangeSetName=change_set.id, StackName=stack_name)
        stack = wait_for_stack(client, change_set.stack_id, poll)
    except Exception as exc:  # one tenant's failure is reported; the others go on
        return DeployOutcome(tenant.name, stack_name, "failed", "ERROR", f"{type(exc).__name__}: {exc}")
    status = stack["StackStatus"]
    ok = status in ("CREATE_COMPLETE", "UPDATE_COMPLETE")
    action = ("created" if change_set.kind == "CREATE" else "updated") if ok else "failed"
    return DeployOutcome(tenant.name, stack_name, action, status, "" if ok else stack.get("StackStatusReason", ""))


def deploy_tenants(
    tenants: list[TenantFile], template: DeployableTemplate, version: str, parallel: int, poll: float = 5.0
) -> list[DeployOutcome]:
    """Deploy every tenant in `tenants`, at most `parallel` at once; outcomes in the tenants' order."""
    regions = {t.region for t in tenants}
    live: dict[str | None, dict[str, dict[str, Any]]] = {r: tenant_stacks(cloudformation(r)) for r in regions}
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = [pool.submit(deploy_one, t, template, version, live[t.region].get(t.name), poll) for t in tenants]
        return [f.result() for f in futures]
