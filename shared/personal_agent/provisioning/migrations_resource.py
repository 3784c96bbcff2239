"""The migrations custom resource: every deploy of a tenant stack applies `infra/migrations` as the owner.

Create and Update apply the pending migrations in one transaction under the migrator's advisory lock and make
sure the app role exists with the password of the app's secret; a second deploy with nothing new is a no-op.
Any failure is answered FAILED with the reason, so CloudFormation rolls the deploy back, and the database is
left as it was. The rollback's Update (to the older revision) and Delete answer SUCCESS and change nothing:
migrations are forward-only and the data outlives the stack.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from personal_agent.aws_clients import aws_client_at
from personal_agent.db.migrate import MIGRATIONS_DIR, apply_migrations
from personal_agent.provisioning.cfn_response import CustomResourceResponse, send_response
from personal_agent.secret_env import database_url_from_secret

DEFAULT_APP_ROLE = "pa_app"
MIGRATIONS_DIR_ENV = "PA_MIGRATIONS_DIR"

FetchSecret = Callable[[str], str]


class MigrationProperties(BaseModel):
    """The resource's properties in template.yaml (ServiceToken and Revision only start or re-run it)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    admin_secret_arn: str = Field(alias="AdminSecretArn", min_length=1)
    app_secret_arn: str = Field("", alias="AppSecretArn")
    database_host: str = Field("", alias="DatabaseHost")
    database_port: str = Field("5432", alias="DatabasePort")
    database_name: str = Field("personal_agent", alias="DatabaseName")


def app_credentials(secret: str) -> tuple[str, str | None]:
    """The app role's name and password from its secret (a URL or RDS-style JSON); a placeholder gives the default
    role without a password (set one later and deploy again)."""
    text = secret.strip()
    if text.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(text)
        return unquote(parts.username or DEFAULT_APP_ROLE), unquote(parts.password) if parts.password else None
    data = json.loads(text) if text else {}
    if not isinstance(data, dict):
        raise ValueError("the app database secret's JSON is not an object")
    if isinstance(data.get("url"), str) and data["url"]:
        return app_credentials(data["url"])
    return str(data.get("username") or DEFAULT_APP_ROLE), (str(data["password"]) if data.get("password") else None)


def _fetch_secret(arn: str) -> str:
    return str(aws_client_at("secretsmanager", None, None).get_secret_value(SecretId=arn)["SecretString"])


def migrate_for_stack(properties: dict[str, Any], fetch: FetchSecret, directory: Path) -> dict[str, str]:
    """Apply the migrations the resource's properties point at; return the resource's data."""
    props = MigrationProperties.model_validate(properties)
    admin_url = database_url_from_secret(
        fetch(props.admin_secret_arn), props.database_host or None, props.database_port, props.database_name
    )
    role, password = app_credentials(fetch(props.app_secret_arn)) if props.app_secret_arn else (DEFAULT_APP_ROLE, None)
    applied = apply_migrations(admin_url, app_role=role, app_password=password, directory=directory, atomic=True)
    return {"Applied": ",".join(applied), "AppliedCount": str(len(applied)), "AppRole": role}


def is_rollback(event: dict[str, Any]) -> bool:
    """An Update back to an older revision (the migrate function's version): CloudFormation rolling back.

    A failed update changed nothing (one transaction), and an applied migration is never undone; re-running the
    new code's migrations here could fail the rollback itself.
    """
    if event["RequestType"] != "Update":
        return False
    new = str(event.get("ResourceProperties", {}).get("Revision", ""))
    old = str(event.get("OldResourceProperties", {}).get("Revision", ""))
    return new.isdigit() and old.isdigit() and int(new) < int(old)


def handle_migrations_event(event: dict[str, Any], fetch: FetchSecret | None = None) -> CustomResourceResponse:
    """Answer one CloudFormation request for the migrations resource (and send the answer)."""
    physical_id = str(event.get("PhysicalResourceId") or f"{event['LogicalResourceId']}-migrations")
    directory = Path(os.environ.get(MIGRATIONS_DIR_ENV) or MIGRATIONS_DIR)
    if event["RequestType"] == "Delete":
        response = CustomResourceResponse("SUCCESS", physical_id, "the database is kept: nothing to undo")
    elif is_rollback(event):
        response = CustomResourceResponse(
            "SUCCESS", physical_id, "rollback: migrations are forward-only, nothing undone"
        )
    else:
        try:
            data = migrate_for_stack(event.get("ResourceProperties", {}), fetch or _fetch_secret, directory)
            done = data["Applied"] or "nothing (up to date)"
            response = CustomResourceResponse("SUCCESS", physical_id, f"applied: {done}", data)
        except Exception as exc:  # every failure must reach CloudFormation, or the deploy hangs for an hour
            response = CustomResourceResponse("FAILED", physical_id, f"migrations failed: {type(exc).__name__}: {exc}")
    send_response(event, response)
    return response
