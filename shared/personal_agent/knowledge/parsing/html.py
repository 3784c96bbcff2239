"""HTML with the standard library's parser: visible text, split at h1-h6 (scripts, styles and templates dropped)."""

from __future__ import annotations

from html.parser import HTMLParser

from personal_agent.knowledge.parsing.sections import Section, decode_text

_SKIP = {"script", "style", "template", "noscript", "head"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCKS = {"p", "div", "li", "br", "tr", "section", "article", "pre", "blockquote", "td", "th"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[Section] = []
        self.heading: str | None = None
        self.parts: list[str] = []
        self.heading_parts: list[str] | None = None
        self.skipping = 0

    def flush(self) -> None:
        text = "".join(self.parts).strip()
        if text:
            self.sections.append(Section(text, heading=self.heading))
        self.parts = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skipping += 1
        elif tag in _HEADINGS:
            self.flush()
            self.heading_parts = []
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _HEADINGS and self.heading_parts is not None:
            self.heading = " ".join("".join(self.heading_parts).split()) or self.heading
            self.heading_parts = None

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        (self.heading_parts if self.heading_parts is not None else self.parts).append(data)


def parse_html(data: bytes) -> list[Section]:
    parser = _Text()
    parser.feed(decode_text(data))
    parser.close()
    parser.flush()
    return parser.sections
