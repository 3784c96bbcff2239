"""Evaluation cases with files on `pa dev` as a user runs it (issue 37), with the offline demo model: two cases ask
the same question of different CSV files and the evaluation's answers follow the files (each case's run gets its
case's file as an attachment and `run_python` reads it by name); a case made from a real conversation takes the file
its question was sent with; another org's admin gets 404 for the dataset, the case and the file; a case is changed
and deleted one by one (422 with a stable code for an empty input); deleting the dataset deletes its files from the
bucket."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.eval_case_files import bucket_keys, upload_case_file, wait_eval

pytestmark = pytest.mark.timeout(600)

CODE = "import csv\nsum(float(row['revenue']) for row in csv.DictReader(open('sales.csv')))"
QUESTION = "/tool run_python " + json.dumps({"code": CODE, "files": ["sales.csv"]})
SALES = b"month,revenue\nJan,120\nFeb,95\nMar,143\n"  # 358
OTHER_SALES = b"month,revenue\nJan,40\nFeb,2\n"  # 42


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-eval-files")) as running:
        yield running


def _run(http: httpx.Client, auth: dict[str, str], message: str, attachments: list[str], chat_id: str) -> str:
    started = http.post(
        f"/api/v1/chats/{chat_id}/runs",
        headers=auth,
        json={"message": message, "model": "offline:demo", "attachments": attachments},
    )
    assert started.status_code == 202, started.text
    with http.stream("GET", started.json()["events_url"], headers=auth) as stream:
        types = [json.loads(line[5:])["type"] for line in stream.iter_lines() if line.startswith("data:")]
    assert types[-1] == "RUN_FINISHED", types
    return str(started.json()["run_id"])


def test_an_eval_over_cases_with_csv_files_answers_from_each_file(server: DevServer) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        admin = server.auth_for("ada", "org-admin")
        cases = [{"input": QUESTION, "expected": "358"}, {"input": QUESTION, "expected": "42", "tags": ["small"]}]
        made = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "sales", "cases": cases})
        assert made.status_code == 201, made.text
        dataset = made.json()["id"]
        first, second = (c["id"] for c in http.get(f"/api/v1/evals/datasets/{dataset}", headers=admin).json()["items"])
        upload = upload_case_file(http, admin, dataset, first, "sales.csv", "text/csv", SALES)
        upload_case_file(http, admin, dataset, second, "sales.csv", "text/csv", OTHER_SALES)
        listed = http.get(f"/api/v1/evals/datasets/{dataset}", headers=admin).json()["items"]
        assert [[(f["filename"], f["size"]) for f in c["files"]] for c in listed] == [
            [("sales.csv", len(SALES))],
            [("sales.csv", len(OTHER_SALES))],
        ]

        body = {"dataset": dataset, "model": "offline:demo", "budget_usd": 1, "scorers": [{"kind": "contains"}]}
        accepted = http.post("/api/v1/evals/runs", headers=admin, json=body)
        assert accepted.status_code == 202, accepted.text
        report = wait_eval(http, accepted.json()["id"], admin)
        for case in report["cases"]:
            print(f"#{case['position'] + 1} -> {case['answer']!r} {case['scores']}")
        assert report["status"] == "succeeded", report
        assert [c["scores"]["contains"] for c in report["cases"]] == [1.0, 1.0]
        assert "358.0" in report["cases"][0]["answer"] and "42.0" in report["cases"][1]["answer"]

        # The file is the org's: another org's admin, and a member of this one, cannot reach it.
        file_id = upload["id"]
        file_path = f"/api/v1/evals/datasets/{dataset}/cases/{first}/files/{file_id}"
        fetched = http.get(f"{file_path}/download", headers=admin)
        assert fetched.status_code == 200, fetched.text
        assert httpx.get(fetched.json()["url"], timeout=30).content == SALES
        elsewhere = server.auth_for("ada", "org-admin", org="elsewhere")
        assert http.get(f"{file_path}/download", headers=elsewhere).json()["code"] == "case_file_not_found"
        assert http.get(f"/api/v1/evals/datasets/{dataset}", headers=elsewhere).status_code == 404
        for method, path in (("DELETE", file_path), ("PATCH", f"/api/v1/evals/datasets/{dataset}/cases/{first}")):
            assert http.request(method, path, headers=elsewhere, json={"expected": "x"}).status_code == 404
        new_file = {"filename": "x.csv", "content_type": "text/csv", "size": 3}
        foreign = http.post(f"/api/v1/evals/datasets/{dataset}/cases/{first}/files", headers=elsewhere, json=new_file)
        assert (foreign.status_code, foreign.json()["code"]) == (404, "case_not_found")
        member = server.auth_for("max", "user")
        assert http.get(f"{file_path}/download", headers=member).status_code == 403

        # One case at a time: changed, refused when empty, deleted (with its file).
        case_path = f"/api/v1/evals/datasets/{dataset}/cases/{second}"
        changed = http.patch(case_path, headers=admin, json={"expected": "42.0", "tags": ["small", "edited"]})
        assert changed.status_code == 200, changed.text
        assert (changed.json()["expected"], changed.json()["tags"], changed.json()["input"]) == (
            "42.0",
            ["small", "edited"],
            QUESTION,
        )
        empty = http.patch(case_path, headers=admin, json={"input": "  "})
        assert (empty.status_code, empty.json()["code"]) == (422, "invalid_case")
        prefix = "/".join(upload["upload"]["fields"]["key"].split("/")[:2]) + "/"
        copies = prefix.replace("eval-files/", "attachments/", 1)  # attachments/{org}/: only the case runs' here
        assert (
            len(bucket_keys(upload["upload"]["url"], prefix)) == len(bucket_keys(upload["upload"]["url"], copies)) == 2
        )
        assert http.delete(case_path, headers=admin).status_code == 204
        assert http.delete(case_path, headers=admin).json()["code"] == "case_not_found"
        assert (
            len(bucket_keys(upload["upload"]["url"], prefix)) == len(bucket_keys(upload["upload"]["url"], copies)) == 1
        )
        added = http.post(f"/api/v1/evals/datasets/{dataset}/cases", headers=admin, json={"input": "by hand"})
        assert added.status_code == 200 and added.json()["cases"] == 2, added.text

        # Deleting the dataset deletes its cases' files from the bucket, and the copies its case runs were given.
        assert http.delete(f"/api/v1/evals/datasets/{dataset}", headers=elsewhere).status_code == 404
        assert http.delete(f"/api/v1/evals/datasets/{dataset}", headers=admin).status_code == 204
        assert bucket_keys(upload["upload"]["url"], prefix) == []
        assert bucket_keys(upload["upload"]["url"], copies) == []
        assert http.get(f"/api/v1/evals/datasets/{dataset}", headers=admin).status_code == 404
        assert http.get(f"{file_path}/download", headers=admin).status_code == 404


def test_a_case_from_a_conversation_takes_the_file_its_question_was_sent_with(server: DevServer) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        member, admin = server.auth_for("max", "user"), server.auth_for("ada", "org-admin")
        chat = http.post("/api/v1/chats", headers=member, json={})
        assert chat.status_code == 201, chat.text
        chat_id = chat.json()["id"]
        body = {"filename": "sales.csv", "content_type": "text/csv", "size": len(SALES)}
        created = http.post(f"/api/v1/chats/{chat_id}/attachments", headers=member, json=body)
        assert created.status_code == 201, created.text
        form = created.json()["upload"]
        sent = httpx.post(form["url"], data=form["fields"], files={"file": ("sales.csv", SALES, "text/csv")})
        assert sent.status_code in (200, 201, 204), sent.text
        run_id = _run(http, member, QUESTION, [created.json()["id"]], chat_id)

        dataset = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "from a chat"}).json()["id"]
        added = http.post(f"/api/v1/evals/datasets/{dataset}/cases", headers=admin, json={"run_id": run_id})
        assert added.status_code == 200, added.text
        case = http.get(f"/api/v1/evals/datasets/{dataset}", headers=admin).json()["items"][0]
        assert case["input"] == QUESTION and "358.0" in case["expected"], case
        assert [(f["filename"], f["size"]) for f in case["files"]] == [("sales.csv", len(SALES))]
        neither = http.post(f"/api/v1/evals/datasets/{dataset}/cases", headers=admin, json={})
        assert neither.status_code == 422

        body = {
            "dataset": dataset,
            "model": "offline:demo",
            "budget_usd": 1,
            "scorers": [{"kind": "regex", "pattern": "358"}],
        }
        accepted = http.post("/api/v1/evals/runs", headers=admin, json=body)
        assert accepted.status_code == 202, accepted.text
        report = wait_eval(http, accepted.json()["id"], admin)
        print("from a chat:", [(c["answer"], c["scores"]) for c in report["cases"]])
        assert report["status"] == "succeeded" and report["cases"][0]["scores"]["regex"] == 1.0, report
