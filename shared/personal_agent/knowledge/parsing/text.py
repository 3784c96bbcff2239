"""Plain text as one section; Markdown split at its `#` headings (the text is kept as written)."""

from __future__ import annotations

from personal_agent.knowledge.parsing.sections import Section, decode_text


def parse_text(data: bytes) -> list[Section]:
    return [Section(decode_text(data))]


def parse_markdown(data: bytes) -> list[Section]:
    sections: list[Section] = []
    heading: str | None = None
    lines: list[str] = []
    fenced = False
    for line in decode_text(data).splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#") and line.lstrip("#").startswith(" "):
            if lines:
                sections.append(Section("\n".join(lines), heading=heading))
            heading, lines = line.lstrip("#").strip(), []
        else:
            lines.append(line)
    if lines:
        sections.append(Section("\n".join(lines), heading=heading))
    return sections
