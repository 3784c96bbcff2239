"""E-mail (`.eml`, RFC 822) with the standard library: a section headed by the subject with who wrote to whom and
when, then the body (the plain-text part, else the HTML part's visible text); attachments are named, not read."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from personal_agent.knowledge.parsing.budget import TextBudget
from personal_agent.knowledge.parsing.html import parse_html
from personal_agent.knowledge.parsing.sections import Section

_HEADERS = ("From", "To", "Cc", "Date", "Subject")


def _body(message: EmailMessage) -> list[Section]:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return []
    try:
        content = part.get_content()
    except (LookupError, ValueError):  # an unknown charset or a broken transfer encoding
        content = part.get_payload(decode=True) or b""
    data = content.encode("utf-8", "replace") if isinstance(content, str) else bytes(content)
    if part.get_content_subtype() == "html":
        return parse_html(data)
    return [Section(data.decode("utf-8", "replace"))]


def parse_eml(data: bytes, budget: TextBudget) -> list[Section]:
    message = BytesParser(policy=policy.default).parsebytes(data)
    assert isinstance(message, EmailMessage)
    subject = " ".join(str(message.get("Subject", "")).split())[:300] or None
    header = "\n".join(f"{name}: {message[name]}" for name in _HEADERS if message.get(name))
    names = [p.get_filename() for p in message.iter_attachments() if p.get_filename()]
    sections = [Section(budget.spend(header), heading=subject)] if header else []
    for section in _body(message):
        sections.append(Section(budget.spend(section.text), heading=section.heading or subject))
    if names:
        sections.append(Section(budget.spend("Attachments: " + ", ".join(str(n) for n in names)), heading=subject))
    return sections
