"""A dataset edited case by case on the admin console's Evaluations page (issue 37 item 2), in a real browser: an
admin attaches a CSV to a case and changes its expected answer, deletes another case, adds one by hand; after a
reload the list shows what was saved; axe finds no serious violation."""

from __future__ import annotations

from typing import Any

from tests.e2e.web_chat_stack import DevStack, describe_violations, screenshot, serious_violations
from tests.e2e.web_chat_steps import sign_in

CSV = b"month,revenue\nJan,120\nFeb,95\nMar,143\n"


def test_an_admin_edits_one_case_deletes_another_and_the_list_keeps_it(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    sign_in(page)
    with web.api(web.token()) as api:
        cases = [
            {"input": "What is the capital of France?", "expected": "Paris"},
            {"input": "Sum the revenue in sales.csv", "expected": "350"},
            {"input": "A case to drop", "tags": ["old"]},
        ]
        made = api.post("/api/v1/evals/datasets", json={"name": "quiz cases", "cases": cases})
        assert made.status_code == 201, made.text
        dataset = made.json()["id"]

    page.goto("/admin/evals")
    section = page.get_by_test_id("dataset-cases")
    section.get_by_label("Dataset to edit").select_option(dataset)
    rows = section.get_by_test_id("dataset-case")
    expect(rows).to_have_count(3)

    rows.nth(1).get_by_role("button", name="Edit case 2").click()
    editing = rows.nth(1)
    editing.get_by_label("Attach a file").set_input_files(
        files=[{"name": "sales.csv", "mimeType": "text/csv", "buffer": CSV}]
    )
    expect(section.get_by_role("status")).to_have_text("sales.csv attached to case 2.")
    editing.get_by_label("Expected answer").fill("358")
    editing.get_by_label("Tags").fill("csv, revenue")
    editing.get_by_role("button", name="Save case 2").click()
    expect(section.get_by_role("status")).to_have_text("Case 2 saved.")

    rows.nth(2).get_by_role("button", name="Delete case 3").click()
    expect(section.get_by_role("status")).to_have_text("Case 3 deleted.")
    expect(rows).to_have_count(2)

    adding = section.get_by_test_id("add-case")
    adding.get_by_label("New case input").fill("What is 2+2?")
    adding.get_by_label("Expected answer").fill("4")
    adding.get_by_role("button", name="Add case").click()
    expect(rows).to_have_count(3)
    screenshot(page, "eval-dataset-cases")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)

    page.reload()
    section.get_by_label("Dataset to edit").select_option(dataset)
    expect(rows).to_have_count(3)
    expect(rows.nth(1).get_by_test_id("case-expected")).to_have_text("Expected: 358 · Tags: csv, revenue")
    expect(rows.nth(1).get_by_test_id("case-files")).to_contain_text("sales.csv")
    expect(rows.nth(2)).to_contain_text("What is 2+2?")
    expect(section).not_to_contain_text("A case to drop")
    with web.api(web.token()) as api:
        stored = api.get(f"/api/v1/evals/datasets/{dataset}").json()["items"]
    assert [(c["input"], c["expected"]) for c in stored] == [
        ("What is the capital of France?", "Paris"),
        ("Sum the revenue in sales.csv", "358"),
        ("What is 2+2?", "4"),
    ]
    assert [f["filename"] for f in stored[1]["files"]] == ["sales.csv"]
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)


def test_an_admin_creates_a_dataset_from_a_jsonl_file_and_an_empty_one_by_hand(page: Any, web: DevStack) -> None:
    """Built on the console: a dataset from a JSONL file (its cases listed, as stored), and an empty one to which a
    case is added by hand; a bad line is refused with the API's message and nothing is created."""
    from playwright.sync_api import expect

    sign_in(page)
    page.goto("/admin/evals")
    creating = page.get_by_test_id("new-dataset")
    lines = b'{"input": "What is 6*7?", "expected": "42", "tags": ["math"]}\n{"input": "Capital of Peru?"}\n'
    creating.get_by_label("Dataset name").fill("from a file")
    creating.get_by_label("Cases from a JSONL file (optional)").set_input_files(
        files=[{"name": "cases.jsonl", "mimeType": "application/jsonl", "buffer": lines}]
    )
    creating.get_by_role("button", name="Create dataset").click()
    expect(creating.get_by_role("status")).to_have_text("Dataset from a file created with 2 cases.")

    creating.get_by_label("Dataset name").fill("broken")
    creating.get_by_label("Cases from a JSONL file (optional)").set_input_files(
        files=[{"name": "bad.jsonl", "mimeType": "application/jsonl", "buffer": b"not json\n"}]
    )
    creating.get_by_role("button", name="Create dataset").click()
    expect(creating.get_by_role("alert")).to_be_visible()

    creating.get_by_label("Dataset name").fill("by hand")
    creating.get_by_label("Cases from a JSONL file (optional)").set_input_files(files=[])
    creating.get_by_role("button", name="Create dataset").click()
    expect(creating.get_by_role("status")).to_have_text("Dataset by hand created with 0 cases.")

    with web.api(web.token()) as api:
        listed = {d["name"]: d for d in api.get("/api/v1/evals/datasets").json()["items"]}
        assert "broken" not in listed
        stored = api.get(f"/api/v1/evals/datasets/{listed['from a file']['id']}").json()["items"]
    assert [(c["input"], c["expected"], c["tags"]) for c in stored] == [
        ("What is 6*7?", "42", ["math"]),
        ("Capital of Peru?", None, []),
    ]
    section = page.get_by_test_id("dataset-cases")
    section.get_by_label("Dataset to edit").select_option(listed["by hand"]["id"])
    adding = section.get_by_test_id("add-case")
    adding.get_by_label("New case input").fill("Name a prime above 10")
    adding.get_by_role("button", name="Add case").click()
    expect(section.get_by_test_id("dataset-case")).to_have_count(1)
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)
