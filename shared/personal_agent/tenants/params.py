"""Tenant parameter files: `tenants/NAME.toml` or `tenants/NAME.json`, one per tenant (docs/operators.md).

    stack_name = "pa-acme-prod"        # optional; default pa-NAME-STAGE
    region = "eu-west-1"               # optional; default the AWS profile's region
    [parameters]                       # template.yaml's parameters; TenantId defaults to NAME, Stage to prod
    OidcIssuer = "https://id.acme.example/realms/acme"
    [tags]                             # optional extra stack tags (pa:tenant and pa:stage are always set)

Files named `example*` or starting with `_` are not tenants.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

TENANT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}$")
ParameterValue = str | int | float | bool | list[str]


class TenantFileError(ValueError):
    """A parameter file that cannot be used, with the file and what is wrong."""


class _FileModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stack_name: str | None = Field(None, pattern=r"^[A-Za-z][A-Za-z0-9-]{0,127}$")
    region: str | None = None
    parameters: dict[str, ParameterValue] = Field(default_factory=dict)
    tags: dict[str, str] = Field(default_factory=dict)


@dataclass(frozen=True)
class TenantFile:
    """One tenant: its stack's name, region, parameters (as CloudFormation strings) and tags."""

    name: str
    path: Path
    stack_name: str
    region: str | None
    parameters: dict[str, str]
    tags: dict[str, str]

    @property
    def stage(self) -> str:
        return self.parameters["Stage"]


def _as_parameter(value: ParameterValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


def load_tenant_file(path: Path) -> TenantFile:
    """Read and check one parameter file."""
    name = path.stem
    if not TENANT_NAME.match(name):
        raise TenantFileError(f"{path}: a tenant file is named for its tenant (lowercase, digits, '-', at most 31)")
    try:
        raw: Any = tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())
        model = _FileModel.model_validate(raw)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, ValidationError) as exc:
        raise TenantFileError(f"{path}: {exc}") from None
    parameters = {k: _as_parameter(v) for k, v in model.parameters.items()}
    parameters.setdefault("TenantId", name)
    parameters.setdefault("Stage", "prod")
    if parameters["TenantId"] != name:
        raise TenantFileError(f"{path}: TenantId {parameters['TenantId']!r} must match the file name {name!r}")
    stack_name = model.stack_name or f"pa-{name}-{parameters['Stage']}"
    tags = {**model.tags, "pa:tenant": name, "pa:stage": parameters["Stage"]}
    return TenantFile(name, path, stack_name, model.region, parameters, tags)


def load_tenants(directory: Path) -> dict[str, TenantFile]:
    """Every tenant in `directory`, by name; two files for one tenant is an error."""
    if not directory.is_dir():
        raise TenantFileError(f"{directory}: no such folder of tenant parameter files")
    tenants: dict[str, TenantFile] = {}
    for path in sorted([*directory.glob("*.toml"), *directory.glob("*.json")]):
        if path.name.startswith(("example", "_")):
            continue
        tenant = load_tenant_file(path)
        if tenant.name in tenants:
            raise TenantFileError(f"{path}: tenant {tenant.name!r} also has {tenants[tenant.name].path.name}")
        tenants[tenant.name] = tenant
    return tenants
