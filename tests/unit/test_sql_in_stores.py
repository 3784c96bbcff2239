"""SQL that writes (`INSERT INTO`, `UPDATE … SET`, `DELETE FROM`) lives only in `*store*.py` modules and `db/`.

One store per table keeps every write to a table in one place (CONVENTIONS: "One store per table"). The scan
reads only string constants (with the literal parts of f-strings), so a comment or a name never counts.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "personal_agent"

_IDENT = r'(?:"[^"]+"|[\w{}]+)(?:\.(?:"[^"]+"|[\w{}]+))?'  # a table, maybe schema-qualified or an f-string slot
WRITE_SQL = re.compile(
    rf"\bINSERT\s+INTO\s+{_IDENT}"
    rf"|\bDELETE\s+FROM\s+{_IDENT}"
    rf"|\bUPDATE\s+(?:ONLY\s+)?{_IDENT}(?:\s+(?:AS\s+)?\w+)?\s+SET\b",
    re.IGNORECASE,
)


def write_sql_in(source: str) -> list[tuple[int, str]]:
    """(line, statement start) of each string constant in `source` that holds a writing SQL verb."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = WRITE_SQL.search(node.value)
            if match:
                found.append((node.lineno, " ".join(match.group(0).split())))
    return sorted(found)


def allowed(path: Path) -> bool:
    relative = path.relative_to(PACKAGE)
    return "store" in path.name or relative.parts[0] == "db"


def test_the_scan_finds_each_writing_verb_and_nothing_else() -> None:
    source = '''
"""A docstring that says a run is updated, inserted into the feed and deleted from the list."""
A = "INSERT INTO runs (id) VALUES (%s)"
B = f"UPDATE provider_models SET {assignments} WHERE id = %s"
C = ("SELECT 1;"
     " DELETE FROM budget_reservations WHERE expires_at <= now()")
D = "UPDATE runs r\\n SET status = 'done'"
E = "SELECT * FROM runs FOR UPDATE SKIP LOCKED"
F = "ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n"
G = "update workflows set enabled = false"
# INSERT INTO in a comment is not SQL that runs
'''
    assert write_sql_in(source) == [
        (3, "INSERT INTO runs"),
        (4, "UPDATE provider_models SET"),
        (5, "DELETE FROM budget_reservations"),
        (7, "UPDATE runs r SET"),
        (10, "update workflows set"),
    ]


def test_sql_that_writes_is_only_in_stores_and_db() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE)}:{line}: {statement}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not allowed(path)
        for line, statement in write_sql_in(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "move this SQL into the table's store module:\n" + "\n".join(offenders)


TESTS = PACKAGE.parents[1] / "tests"
# Tests whose subject is the database refusing or auditing a write (row-level security, the append-only ledger,
# owner scoping): the raw write is the attack under test.
WRITES_UNDER_TEST = {
    "test_rls.py",
    "test_ledger.py",
    "test_owner_scoping_sql.py",
    "test_memories.py",
    "test_tenant_rls_function.py",
}
CHANGES = re.compile(r"^(UPDATE|DELETE)\b", re.IGNORECASE)


def test_tests_change_rows_only_through_the_api_the_stores_or_db_state() -> None:
    """A test sets state through the API or the stores; what neither does (time passing, a worker dying, a row
    moved behind the API's back) goes through `tests/db_state.py`, named for what it simulates."""
    offenders = [
        f"{path.relative_to(TESTS)}:{line}: {statement}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in {"db_state.py", "test_sql_in_stores.py", *WRITES_UNDER_TEST}
        for line, statement in write_sql_in(path.read_text(encoding="utf-8"))
        if CHANGES.match(statement)
    ]
    assert offenders == [], "set this state through the API, a store or tests/db_state.py:\n" + "\n".join(offenders)
