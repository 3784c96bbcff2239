"""What counts as an outage of the bus or the database (`errors.dependency_outage`), and how the API answers one:
503 `dependency_unavailable` with `Retry-After`, never a 500, whichever layer let the driver's error through."""

from __future__ import annotations

import pickle

import httpx
import psycopg
import psycopg.errors
import pytest
import redis.exceptions
from fastapi import FastAPI
from psycopg_pool import PoolTimeout

from personal_agent.api.errors import install_error_handlers
from personal_agent.errors import DependencyUnavailable, InvalidInput, dependency_outage


@pytest.mark.parametrize(
    ("exc", "dependency"),
    [
        (psycopg.OperationalError("connection refused"), "database"),
        (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), "database"),
        (psycopg.errors.CannotConnectNow("the database system is starting up"), "database"),
        (psycopg.errors.ReadOnlySqlTransaction("cannot execute INSERT in a read-only transaction"), "database"),
        (PoolTimeout("couldn't get a connection after 10.00 sec"), "database"),
        (redis.exceptions.ConnectionError("Connection refused"), "bus"),
        (redis.exceptions.TimeoutError("Timeout reading from socket"), "bus"),
        (redis.exceptions.ReadOnlyError("You can't write against a read only replica."), "bus"),
        (DependencyUnavailable("bus"), "bus"),
    ],
)
def test_connection_class_failures_are_outages(exc: BaseException, dependency: str) -> None:
    outage = dependency_outage(exc)
    assert outage is not None and outage.dependency == dependency and outage.retry_after >= 1


def _caused(exc: BaseException, by: BaseException) -> BaseException:
    exc.__cause__ = by
    return exc


def test_an_outage_is_found_as_a_cause_or_in_a_group_but_a_decided_error_stays_what_it_is() -> None:
    lost = psycopg.OperationalError("server closed the connection unexpectedly")
    assert dependency_outage(_caused(RuntimeError("step failed"), lost)) is not None
    assert dependency_outage(ExceptionGroup("task group", [ValueError("x"), lost])) is not None
    assert dependency_outage(_caused(InvalidInput("bad"), lost)) is None  # the caller's error, already decided
    assert dependency_outage(psycopg.errors.UniqueViolation("duplicate key")) is None
    assert dependency_outage(ValueError("nope")) is None


def test_a_dependency_outage_survives_pickling() -> None:
    """Errors cross process boundaries (the activity worker's threads, Lambda error payloads)."""
    copy = pickle.loads(pickle.dumps(DependencyUnavailable("database", "gone", retry_after=7)))
    assert (copy.dependency, copy.message, copy.retry_after) == ("database", "gone", 7.0)


async def test_the_api_answers_an_unmapped_driver_error_with_503_and_retry_after() -> None:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/bus")
    async def bus() -> None:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 10.0.0.5:6379. Connection refused.")

    @app.get("/database")
    async def database() -> None:
        raise DependencyUnavailable("database", retry_after=2.5)

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        for path, dependency, retry_after in (("/bus", "bus", "5"), ("/database", "database", "3")):
            response = await client.get(path)
            assert response.status_code == 503
            body = response.json()
            assert (body["code"], body["details"]["dependency"]) == ("dependency_unavailable", dependency)
            assert response.headers["Retry-After"] == retry_after
            assert "10.0.0.5" not in response.text  # the driver's text (hosts, addresses) is never shown
