"""Tenant parameter files (`pa tenants`): TOML and JSON, defaults, CloudFormation strings, and clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from personal_agent.tenants.params import TenantFileError, load_tenants

ROOT = Path(__file__).resolve().parents[2]


def test_toml_and_json_files_become_stacks_with_string_parameters(tmp_path: Path) -> None:
    (tmp_path / "acme.toml").write_text(
        '[parameters]\nOidcIssuer = "https://id.acme"\nAuroraMaxCapacity = 8\nAutoCreateOrgs = false\n'
        'VpcSubnetIds = ["subnet-a", "subnet-b"]\n[tags]\ncost-center = "acme"\n'
    )
    (tmp_path / "globex.json").write_text(
        json.dumps({"stack_name": "globex-stack", "region": "eu-west-1", "parameters": {"Stage": "staging"}})
    )
    tenants = load_tenants(tmp_path)
    acme, globex = tenants["acme"], tenants["globex"]
    assert acme.stack_name == "pa-acme-prod" and acme.region is None
    assert acme.parameters == {
        "OidcIssuer": "https://id.acme",
        "AuroraMaxCapacity": "8",
        "AutoCreateOrgs": "false",
        "VpcSubnetIds": "subnet-a,subnet-b",
        "TenantId": "acme",
        "Stage": "prod",
    }
    assert acme.tags == {"cost-center": "acme", "pa:tenant": "acme", "pa:stage": "prod"}
    assert (globex.stack_name, globex.region, globex.stage) == ("globex-stack", "eu-west-1", "staging")


def test_the_shipped_example_is_valid_and_never_deployed() -> None:
    from personal_agent.tenants.params import load_tenant_file

    example = load_tenant_file(ROOT / "tenants" / "example.toml")
    assert example.parameters["Database"] == "aurora" and example.parameters["TenantId"] == "example"
    assert "example" not in load_tenants(ROOT / "tenants")


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("Acme.toml", "", "named for its tenant"),
        ("acme.toml", "[parameters\n", "acme.toml"),
        ("acme.toml", 'stack = "x"\n', "Extra inputs are not permitted"),
        ("acme.toml", '[parameters]\nTenantId = "other"\n', "must match the file name"),
        ("acme.json", '{"parameters": {"X": {"nested": 1}}}', "acme.json"),
    ],
)
def test_a_bad_file_is_refused_with_its_name_and_reason(tmp_path: Path, name: str, text: str, said: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(TenantFileError, match=said):
        load_tenants(tmp_path)


def test_one_tenant_in_two_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "acme.toml").write_text("")
    (tmp_path / "acme.json").write_text("{}")
    with pytest.raises(TenantFileError, match="also has"):
        load_tenants(tmp_path)
