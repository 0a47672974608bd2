"""Docs: docs_read (as Markdown), docs_create, docs_append, docs_replace."""

from __future__ import annotations

from typing import Any

from tether.packs.google._kit import Kit
from tether.packs.google._text import docs_markdown, page_of
from tether.tools import Tool

__all__ = ["docs_tools"]

_WRITE = ("documents",)


def docs_tools(kit: Kit) -> list[Tool[..., Any]]:
    def documents() -> Any:
        return kit.api.resource("docs", "v1", "documents")

    def insert(document_id: str, text: str) -> None:
        request: dict[str, Any] = {"insertText": {"text": text, "endOfSegmentLocation": {}}}
        documents().batchUpdate(documentId=document_id, body={"requests": [request]}).execute()

    @kit.tool("docs_read", ("documents.readonly",), "none")
    def docs_read(documentId: str, offset: int = 0) -> dict[str, Any]:
        """Read a Google Doc as Markdown (headings, lists, tables as rows).

        Args:
            documentId: The document's id (the long part of its URL).
            offset: Where to start reading a long document (the `nextOffset` of a truncated read).
        """
        document = documents().get(documentId=documentId).execute()
        return {
            "documentId": document.get("documentId", documentId),
            "title": document.get("title", ""),
            "content": page_of(docs_markdown(document), offset, kit.max_chars),
        }

    @kit.tool("docs_create", _WRITE, "mutating")
    def docs_create(title: str, text: str = "") -> dict[str, Any]:
        """Create a Google Doc, optionally with text.

        Args:
            title: The document's title.
            text: Its first text.
        """
        created = documents().create(body={"title": title}).execute()
        document_id = str(created["documentId"])
        if text:
            insert(document_id, text)
        return {"documentId": document_id, "title": created.get("title", title)}

    @kit.tool("docs_append", _WRITE, "mutating")
    def docs_append(documentId: str, text: str) -> dict[str, Any]:
        """Add text at the end of a Google Doc.

        Args:
            documentId: The document's id.
            text: The text to add (start it with a newline for a new paragraph).
        """
        insert(documentId, text)
        return {"documentId": documentId, "appendedChars": len(text)}

    @kit.tool("docs_replace", _WRITE, "mutating")
    def docs_replace(
        documentId: str, findText: str, replaceText: str, matchCase: bool = True
    ) -> dict[str, Any]:
        """Replace every occurrence of a text in a Google Doc.

        Args:
            documentId: The document's id.
            findText: The text to find.
            replaceText: What to put instead.
            matchCase: Whether case must match.
        """
        request = {
            "replaceAllText": {
                "containsText": {"text": findText, "matchCase": matchCase},
                "replaceText": replaceText,
            }
        }
        done = documents().batchUpdate(documentId=documentId, body={"requests": [request]}).execute()
        replies: list[dict[str, Any]] = done.get("replies", [{}])
        changed = replies[0].get("replaceAllText", {}).get("occurrencesChanged", 0) if replies else 0
        return {"documentId": documentId, "occurrencesChanged": changed}

    return [docs_read, docs_create, docs_append, docs_replace]
