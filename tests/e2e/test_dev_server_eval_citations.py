"""The `passage_cited` scorer on `pa dev` (issue 37): an evaluation of the offline demo model over a question about
an org document scores 1 where the answer cites the document's passage (the demo model searches the documents and
cites `[n]`) and 0 for a question whose answer cites nothing; a scorer without its document is refused (422)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.pa_dev import running_pa_dev

MANUAL = "# Valve\n\nThe Zephyr valve is recalibrated every 90 days by the night shift.\n"


def _upload(url: str, auth: dict[str, str], filename: str, text: str) -> None:
    data = text.encode()
    body = {"filename": filename, "content_type": "text/markdown", "size": len(data)}
    created = httpx.post(f"{url}/api/v1/knowledge/documents", headers=auth, json=body, timeout=30)
    assert created.status_code == 201, created.text
    upload, document = created.json()["upload"], created.json()["document"]
    with FeedListener(url, auth) as feed:
        sent = httpx.post(upload["url"], data=upload["fields"], files={"file": (filename, data)}, timeout=30)
        assert sent.status_code == 204, sent.text
        assert feed.until_done(document["id"])["status"] == "ready"


def _wait(http: httpx.Client, eval_id: str, auth: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        got = http.get(f"/api/v1/evals/runs/{eval_id}", headers=auth)
        assert got.status_code == 200, got.text
        if got.json()["status"] not in ("queued", "running"):
            return dict(got.json())
        assert time.monotonic() < deadline, got.text
        time.sleep(0.2)  # polling the evaluation's status, with a deadline


@pytest.mark.timeout(600)
def test_passage_cited_scores_an_answer_that_cites_the_document(tmp_path: Any) -> None:
    with running_pa_dev(tmp_path / "data") as server, httpx.Client(base_url=server.url, timeout=60) as http:
        admin = server.auth_for("ada", "org-admin")
        _upload(server.url, admin, "zephyr.md", MANUAL)
        cases = [
            {"input": "What does the manual say about how often the Zephyr valve is recalibrated?"},
            {"input": "What is 6 times 7?"},
        ]
        dataset = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "cited", "cases": cases})
        assert dataset.status_code == 201, dataset.text
        refused = http.post(
            "/api/v1/evals/runs",
            headers=admin,
            json={
                "dataset": dataset.json()["id"],
                "model": "offline:demo",
                "budget_usd": 1,
                "scorers": [{"kind": "passage_cited"}],
            },
        )
        assert (refused.status_code, refused.json()["code"]) == (422, "invalid_scorer"), refused.text
        scorer = {"kind": "passage_cited", "document": "zephyr.md", "text": "90 days"}
        body = {"dataset": dataset.json()["id"], "model": "offline:demo", "budget_usd": 1, "scorers": [scorer]}
        accepted = http.post("/api/v1/evals/runs", headers=admin, json=body)
        assert accepted.status_code == 202, accepted.text
        report = _wait(http, accepted.json()["id"], admin)
        for case in report["cases"]:
            print(f"{case['input']!r} -> {case['answer']!r} {case['scores']}")
        assert report["status"] == "succeeded", report
        assert [c["scores"]["passage_cited"] for c in report["cases"]] == [1.0, 0.0]
