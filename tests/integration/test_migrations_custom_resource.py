"""The migrations custom resource, driven by CloudFormation's create, update and delete events (tests/events/)
against a fresh database in the embedded Postgres; its answers arrive at a loopback server standing in for the
presigned response URL, as CloudFormation would receive them."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import boto3
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from functions.migrate.app import handler
from personal_agent.db.migrate import MIGRATIONS_DIR, discover
from tests.cfn_response_server import ReceivedResponse, ResponseServer
from tests.lambda_context import FakeLambdaContext, load_event


@pytest.fixture
def responses() -> Iterator[ResponseServer]:
    server = ResponseServer().start()
    yield server
    server.stop()


@pytest.fixture
def fresh_database(admin_url: str) -> Iterator[str]:
    """An empty database of its own (the migrations run on it from nothing); the owner's URL to it."""
    name = f"pa_cfn_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield _as_url(make_conninfo(admin_url, dbname=name))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def _as_url(conninfo: str) -> str:
    """A postgresql:// URL (what a database secret holds) for a keyword conninfo such as the embedded server's."""
    params = conninfo_to_dict(conninfo)
    password = f":{quote(str(params['password']), safe='')}" if params.get("password") else ""
    return (
        f"postgresql://{quote(str(params['user']), safe='')}{password}@/{params['dbname']}"
        f"?host={quote(str(params['host']), safe='')}&port={params.get('port', 5432)}"
    )


@pytest.fixture
def app_role() -> tuple[str, str]:
    # A role of its own: the shared app role's password must not change under the other tests.
    return f"pa_app_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex


@pytest.fixture
def secrets(fresh_database: str, app_role: tuple[str, str]) -> dict[str, str]:
    """The owner's secret (a URL) and the app role's (RDS-style JSON), in the local Secrets Manager."""
    client = boto3.client("secretsmanager")
    suffix = uuid.uuid4().hex[:8]
    owner = client.create_secret(Name=f"pa-test/{suffix}/owner", SecretString=fresh_database)["ARN"]
    role, password = app_role
    app = client.create_secret(
        Name=f"pa-test/{suffix}/app", SecretString=json.dumps({"username": role, "password": password})
    )["ARN"]
    return {"AdminSecretArn": owner, "AppSecretArn": app}


def _deliver(
    name: str, responses: ResponseServer, secrets: dict[str, str], old_revision: str | None = None, **props: str
) -> tuple[ReceivedResponse, dict[str, Any]]:
    event = load_event(name)
    event["ResponseURL"] = responses.url(f"response/{event['RequestId']}")
    event["ResourceProperties"].update(secrets, **props)
    if old_revision is not None:
        event["OldResourceProperties"].update(secrets, Revision=old_revision)
    before = len(responses.received)
    result = handler(event, FakeLambdaContext(function_name="pa-acme-prod-MigrateFunction"))
    assert len(responses.received) == before + 1, "exactly one answer per request"
    answer = responses.received[-1]
    assert answer.path.startswith(f"/response/{event['RequestId']}?")
    assert answer.content_type == ""  # the presigned URL is signed for an empty content type
    assert answer.body["Status"] == result["Status"]
    for key in ("StackId", "RequestId", "LogicalResourceId"):
        assert answer.body[key] == event[key]
    return answer, event


def _applied(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        return [(r[0], str(r[1])) for r in conn.execute("SELECT version, applied_at FROM schema_migrations ORDER BY 1")]


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}


def test_create_applies_every_migration_and_makes_the_app_role(
    responses: ResponseServer, secrets: dict[str, str], fresh_database: str, app_role: tuple[str, str]
) -> None:
    answer, _ = _deliver("migrate_create.json", responses, secrets)
    assert answer.body["Status"] == "SUCCESS", answer.body["Reason"]
    versions = [m.version for m in discover()]
    assert [v for v, _ in _applied(fresh_database)] == versions
    assert answer.body["Data"]["AppliedCount"] == str(len(versions))
    assert answer.body["PhysicalResourceId"] == "DatabaseMigrations-migrations"

    # The app role logs in with its secret's password and is held by row-level security.
    role, password = app_role
    params = conninfo_to_dict(fresh_database) | {"user": role, "password": password}
    with psycopg.connect(make_conninfo(**params)) as conn:
        assert conn.execute("SELECT count(*) FROM chats").fetchone() == (0,)
        flags = conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()
        assert flags == (False, False)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT * FROM schema_migrations")


def test_a_second_deploy_is_a_no_op(responses: ResponseServer, secrets: dict[str, str], fresh_database: str) -> None:
    _deliver("migrate_create.json", responses, secrets)
    before = _applied(fresh_database)
    answer, _ = _deliver("migrate_update.json", responses, secrets)
    assert answer.body["Status"] == "SUCCESS"
    assert answer.body["Reason"] == "applied: nothing (up to date)"
    assert answer.body["Data"]["AppliedCount"] == "0"
    assert answer.body["PhysicalResourceId"] == "DatabaseMigrations-migrations"  # same resource: no replacement
    assert _applied(fresh_database) == before


def test_a_failing_migration_is_reported_failed_and_changes_nothing(
    responses: ResponseServer,
    secrets: dict[str, str],
    fresh_database: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _deliver("migrate_create.json", responses, secrets)
    before_rows, before_tables = _applied(fresh_database), _tables(fresh_database)

    # The next release ships a good migration followed by a broken one: neither may stay applied.
    shipped = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, shipped)
    (shipped / "9998_probe.sql").write_text("CREATE TABLE cfn_probe (id int);\nINSERT INTO cfn_probe VALUES (1);\n")
    (shipped / "9999_broken.sql").write_text("ALTER TABLE no_such_table ADD COLUMN x int;\n")
    monkeypatch.setenv("PA_MIGRATIONS_DIR", str(shipped))

    answer, _ = _deliver("migrate_update.json", responses, secrets)
    assert answer.body["Status"] == "FAILED"
    assert "9999_broken" in answer.body["Reason"] and "no_such_table" in answer.body["Reason"]
    assert _applied(fresh_database) == before_rows
    assert _tables(fresh_database) == before_tables  # 9998's table was rolled back with the rest


def test_the_rollback_after_a_failed_update_changes_nothing_and_succeeds(
    responses: ResponseServer,
    secrets: dict[str, str],
    fresh_database: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _deliver("migrate_create.json", responses, secrets)
    before = _applied(fresh_database)
    shipped = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, shipped)
    (shipped / "9999_broken.sql").write_text("ALTER TABLE no_such_table ADD COLUMN x int;\n")
    monkeypatch.setenv("PA_MIGRATIONS_DIR", str(shipped))
    # CloudFormation rolls back from revision 3 to 2; the alias may still run the new code and its migrations.
    answer, _ = _deliver("migrate_update.json", responses, secrets, old_revision="3", Revision="2")
    assert answer.body["Status"] == "SUCCESS" and answer.body["Reason"].startswith("rollback")
    assert _applied(fresh_database) == before


def test_an_unreachable_database_fails_without_revealing_the_password(
    responses: ResponseServer, secrets: dict[str, str], fresh_database: str
) -> None:
    url = "postgresql://{user}:s3cret-never-shown@127.0.0.1:1/{dbname}".format(**conninfo_to_dict(fresh_database))
    arn = boto3.client("secretsmanager").create_secret(Name=f"pa-test/{uuid.uuid4().hex[:8]}", SecretString=url)
    answer, _ = _deliver("migrate_create.json", responses, {**secrets, "AdminSecretArn": arn["ARN"]})
    assert answer.body["Status"] == "FAILED"
    assert answer.body["Reason"].startswith("migrations failed: OperationalError")
    assert "s3cret-never-shown" not in json.dumps(answer.body)


def test_delete_reports_success_and_keeps_the_data(
    responses: ResponseServer, secrets: dict[str, str], fresh_database: str
) -> None:
    _deliver("migrate_create.json", responses, secrets)
    before_rows, before_tables = _applied(fresh_database), _tables(fresh_database)
    # A stack deleted after its database became unreachable must still delete: the answer needs no database.
    answer, _ = _deliver("migrate_delete.json", responses, {"AdminSecretArn": "arn:aws:secretsmanager:gone"})
    assert answer.body["Status"] == "SUCCESS"
    assert answer.body["PhysicalResourceId"] == "DatabaseMigrations-migrations"
    assert _applied(fresh_database) == before_rows and _tables(fresh_database) == before_tables
