"""A citation's document opens from the bucket (issue 36, item 6), on `pa dev` over HTTP:
`GET /api/v1/knowledge/documents/{id}/download` hands whoever may search a document a presigned GET of its file —
a PDF inline (the browser's viewer then honours `#page=N`), anything else as a download — and a document the
caller may not search is 404 `document_not_found`, as another org's is."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.pa_dev import running_pa_dev
from tests.knowledge import PDF, make_pdf

pytestmark = pytest.mark.timeout(300)


@dataclass(frozen=True)
class People:
    url: str
    owner: dict[str, str]
    reader: dict[str, str]
    outsider: dict[str, str]
    """A member of the same org who is not a reader of the named collection."""
    other_org: dict[str, str]


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory) -> Iterator[People]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-kb-download"), org="files") as server:
        yield People(
            server.url,
            server.auth_for("olga", "org-admin", org="files"),
            server.auth_for("mick", "user", org="files"),
            server.auth_for("nina", "user", org="files"),
            server.auth_for("eve", "org-admin", org="elsewhere"),
        )


def _upload(url: str, auth: dict[str, str], filename: str, content_type: str, data: bytes, **extra: Any) -> str:
    body = {"filename": filename, "content_type": content_type, "size": len(data), **extra}
    created = httpx.post(f"{url}/api/v1/knowledge/documents", headers=auth, json=body, timeout=30)
    assert created.status_code == 201, created.text
    upload, document = created.json()["upload"], created.json()["document"]
    with FeedListener(url, auth) as feed:
        sent = httpx.post(upload["url"], data=upload["fields"], files={"file": (filename, data)}, timeout=30)
        assert sent.status_code == 204, sent.text
        assert feed.until_done(document["id"])["status"] == "ready"
    return str(document["id"])


def _download(url: str, auth: dict[str, str], document_id: str) -> httpx.Response:
    return httpx.get(f"{url}/api/v1/knowledge/documents/{document_id}/download", headers=auth, timeout=30)


def _not_found(answer: httpx.Response) -> None:
    assert (answer.status_code, answer.json()["code"]) == (404, "document_not_found"), answer.text


def test_the_owner_opens_a_pdf_inline_from_the_bucket(people: People) -> None:
    data = make_pdf(["Chapter one: the valve.", "Chapter two: the recalibration every ninety days."])
    document_id = _upload(people.url, people.owner, "manual.pdf", PDF, data)

    answer = _download(people.url, people.owner, document_id)
    assert answer.status_code == 200, answer.text
    link = answer.json()
    assert (link["filename"], link["content_type"], link["disposition"]) == ("manual.pdf", PDF, "inline")
    assert f"/{document_id}/manual.pdf" in link["url"] and link["expires_in"] > 0
    fetched = httpx.get(link["url"], timeout=30)  # no bearer token: the signature is the permission
    assert fetched.status_code == 200 and fetched.content == data
    assert fetched.headers["content-type"] == PDF
    assert fetched.headers["content-disposition"].startswith('inline; filename="manual.pdf"')


def test_a_text_file_comes_as_a_download(people: People) -> None:
    document_id = _upload(people.url, people.owner, "page.html", "text/html", b"<h1>Hi</h1><p>A page.</p>")
    link = _download(people.url, people.owner, document_id).json()
    assert (link["content_type"], link["disposition"]) == ("text/html", "attachment")
    fetched = httpx.get(link["url"], timeout=30)
    assert fetched.headers["content-disposition"].startswith('attachment; filename="page.html"')


def test_a_reader_of_a_named_collection_opens_its_document_and_nobody_else_does(people: People) -> None:
    reader_id = httpx.get(f"{people.url}/api/v1/me", headers=people.reader, timeout=30).json()["user_id"]
    body = {"name": "Manuals", "readers": [reader_id]}
    created = httpx.post(f"{people.url}/api/v1/knowledge/collections", headers=people.owner, json=body, timeout=30)
    assert created.status_code == 201, created.text
    data = make_pdf(["Manuals only: the pump is primed before use."])
    document_id = _upload(people.url, people.owner, "pump.pdf", PDF, data, collection=created.json()["id"])

    opened = _download(people.url, people.reader, document_id)
    assert opened.status_code == 200, opened.text
    assert httpx.get(opened.json()["url"], timeout=30).content == data
    _not_found(_download(people.url, people.outsider, document_id))  # same org, not a reader
    _not_found(_download(people.url, people.other_org, document_id))


def test_a_personal_document_opens_for_its_owner_only(people: People) -> None:
    data = make_pdf(["Mick's own notes."])
    document_id = _upload(people.url, people.reader, "notes.pdf", PDF, data, collection="personal")
    assert _download(people.url, people.reader, document_id).status_code == 200
    _not_found(_download(people.url, people.outsider, document_id))
    _not_found(_download(people.url, people.owner, document_id))  # an org admin does not open a member's own
    _not_found(_download(people.url, people.other_org, document_id))
    _not_found(_download(people.url, people.owner, "00000000-0000-4000-8000-000000000000"))
