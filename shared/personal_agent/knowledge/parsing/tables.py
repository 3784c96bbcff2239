"""CSV (standard library) and XLSX (openpyxl, read-only, cached formula values) as tables: the first non-empty row
is the header, and every later row is written as `column: value` pairs, so a passage says what each value is and a
question about a row ("what does Alice Moreau earn?") finds it. Rows are grouped into sections of about
`GROUP_CHARS` characters, each headed `sheet, rows a-b`, so a citation names where the row is.

A workbook is bounded before and while it is read: the archive's central directory (`check_archive`), at most
`MAX_SHEETS` sheets (`too_many_pages`), a sheet's declared size is not trusted (openpyxl would pad every row to a
declared `A1:XFD1048576`: each row is as wide as its last real cell), and at most `MAX_CELLS` cells are read in all
(`too_large`), so a small file that declares or spreads a huge grid is cut in seconds, not at the parse deadline."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from personal_agent.knowledge.parsing.budget import TextBudget, too_large
from personal_agent.knowledge.parsing.docx import check_archive
from personal_agent.knowledge.parsing.sections import Section, UnreadableDocument, decode_text

GROUP_CHARS = 700
"""A section's rows (about 180 tokens): under one chunk, so a row is never cut between two chunks."""
MAX_CELL_CHARS = 2000
MAX_SHEETS = 500
MAX_CELLS = 2_000_000
"""Cells read in a workbook, empty ones inside a row and an empty row (1) counted: ~50 MB of cell values."""


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(str(value).split())[:MAX_CELL_CHARS]


def _row_text(header: Sequence[str], row: Sequence[str]) -> str:
    pairs = []
    for i, value in enumerate(row):
        if value:
            name = header[i] if i < len(header) and header[i] else f"column {i + 1}"
            pairs.append(f"{name}: {value}")
    return " | ".join(pairs)


def table_sections(name: str | None, rows: Iterable[Sequence[Any]], budget: TextBudget) -> list[Section]:
    """One table's sections: rows (cells of any type) after the header, grouped, each group headed by where it is."""
    sections: list[Section] = []
    header: list[str] | None = None
    group: list[str] = []
    first = last = size = 0
    where = f"{name}, rows" if name else "rows"
    for number, raw in enumerate(rows, start=1):
        cells = [_cell(v) for v in raw]
        if not any(cells):
            continue
        if header is None:
            header = cells
            continue
        text = budget.spend(_row_text(header, cells))
        if group and size + len(text) > GROUP_CHARS:
            sections.append(Section("\n\n".join(group), heading=f"{where} {first}-{last}"))
            group, size = [], 0
        if not group:
            first = number
        group.append(text)
        size += len(text)
        last = number
    if group:
        sections.append(Section("\n\n".join(group), heading=f"{where} {first}-{last}"))
    elif header is not None:  # a header alone is still the table's text
        sections.append(Section(budget.spend(" | ".join(c for c in header if c)), heading=name))
    return sections


def parse_csv(data: bytes, budget: TextBudget) -> list[Section]:
    text = decode_text(data)
    try:
        dialect: Any = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        return table_sections(None, csv.reader(io.StringIO(text), dialect), budget)
    except csv.Error as exc:
        raise UnreadableDocument("corrupt", f"the CSV could not be read ({exc})") from None


def parse_xlsx(data: bytes, budget: TextBudget) -> list[Section]:
    from openpyxl import load_workbook  # type: ignore[import-untyped]

    check_archive(data, "XLSX")
    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises whatever its XML and zip readers do
        raise UnreadableDocument("corrupt", f"the XLSX could not be read ({type(exc).__name__})") from None
    if len(book.sheetnames) > MAX_SHEETS:
        book.close()
        raise UnreadableDocument("too_many_pages", f"the XLSX has more than {MAX_SHEETS} sheets")
    sections: list[Section] = []
    read = [0]
    try:
        for sheet in book.worksheets:
            sheet.reset_dimensions()  # as wide as its cells, not as its declared size
            sections += table_sections(sheet.title, _counted(sheet.iter_rows(values_only=True), read), budget)
    finally:
        book.close()
    return sections


def _counted(rows: Iterable[Sequence[Any]], read: list[int]) -> Iterator[Sequence[Any]]:
    """The rows, each counted (its width, at least 1) into `read`; `too_large` past `MAX_CELLS` in all."""
    for row in rows:
        read[0] += max(len(row), 1)
        if read[0] > MAX_CELLS:
            raise too_large(f"the XLSX has more than {MAX_CELLS:,} cells")
        yield row
