"""Plain text as one section; Markdown split at its `#` headings, each section headed by its heading path (the
text is kept as written)."""

from __future__ import annotations

from personal_agent.knowledge.parsing.sections import Section, decode_text


def parse_text(data: bytes) -> list[Section]:
    return [Section(decode_text(data))]


SECTION_PATH_SEPARATOR = " › "


def parse_markdown(data: bytes) -> list[Section]:
    """Sections at `#` headings, each headed by its heading path (`Guide › Install › Linux`)."""
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    lines: list[str] = []
    fenced = False

    def heading() -> str | None:
        return SECTION_PATH_SEPARATOR.join(title for _, title in path) or None

    for line in decode_text(data).splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#") and line.lstrip("#").startswith(" "):
            if lines:
                sections.append(Section("\n".join(lines), heading=heading()))
            level = len(line) - len(line.lstrip("#"))
            path = [(lv, title) for lv, title in path if lv < level] + [(level, line.lstrip("#").strip())]
            lines = []
        else:
            lines.append(line)
    if lines:
        sections.append(Section("\n".join(lines), heading=heading()))
    return sections
