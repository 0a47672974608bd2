"""Outputs a model can use: text capped with a notice and a way to page, HTML as plain text, Docs as Markdown."""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_CHARS", "docs_markdown", "html_text", "page_of"]

MAX_CHARS = 20_000
"""The most characters of a body, file or document one call returns; the rest is one `offset` away."""


def page_of(text: str, offset: int = 0, limit: int = MAX_CHARS) -> dict[str, Any]:
    """`text[offset:offset+limit]`, with `truncated`, and when it is, `nextOffset` and a notice saying how
    to read on."""
    offset = max(0, offset)
    part = text[offset : offset + limit]
    out: dict[str, Any] = {"text": part, "totalChars": len(text)}
    end = offset + len(part)
    if end < len(text):
        out["truncated"] = True
        out["nextOffset"] = end
        out["notice"] = (
            f"[truncated: showing characters {offset}-{end} of {len(text)}; call again with offset={end} "
            "for more]"
        )
    else:
        out["truncated"] = False
    return out


def html_text(html: str) -> str:
    """HTML (an email body) as readable plain text: links kept as Markdown, no line wrapping."""
    import html2text  # the google extra

    converter = html2text.HTML2Text()
    converter.body_width = 0
    converter.ignore_images = True
    converter.unicode_snob = True
    return converter.handle(html).strip()


def docs_markdown(document: dict[str, Any]) -> str:
    """A Google Docs document (`documents.get`) as Markdown: headings, list items, tables as rows."""
    lines: list[str] = []
    for element in document.get("body", {}).get("content", []):
        if "paragraph" in element:
            lines.append(_paragraph(element["paragraph"]))
        elif "table" in element:
            for row in element["table"].get("tableRows", []):
                cells = [
                    " ".join(
                        _paragraph(c["paragraph"]).strip()
                        for c in cell.get("content", [])
                        if "paragraph" in c
                    )
                    for cell in row.get("tableCells", [])
                ]
                lines.append("| " + " | ".join(cells) + " |")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines).strip("\n")


def _paragraph(paragraph: dict[str, Any]) -> str:
    text = "".join(e.get("textRun", {}).get("content", "") for e in paragraph.get("elements", []))
    style = paragraph.get("paragraphStyle", {}).get("namedStyleType", "")
    if style == "TITLE":
        return "# " + text
    if style.startswith("HEADING_") and style[8:].isdigit():
        return "#" * min(6, int(style[8:])) + " " + text
    if "bullet" in paragraph:
        return "- " + text
    return text
