"""Docs tools through the real client: documents read as Markdown, writes as batchUpdate requests."""

from typing import Any

import pytest

from tether.types import OkEnvelope

from .conftest import FakeGoogle, Sent, reply

pytestmark = pytest.mark.anyio

DOCS = "docs.googleapis.com"


def paragraph(text: str, style: str = "NORMAL_TEXT", bullet: bool = False) -> dict[str, object]:
    p: dict[str, object] = {
        "elements": [{"textRun": {"content": text}}],
        "paragraphStyle": {"namedStyleType": style},
    }
    if bullet:
        p["bullet"] = {"listId": "l1"}
    return {"paragraph": p}


async def test_docs_read_gives_markdown_with_headings_lists_and_table_rows(google: FakeGoogle) -> None:
    document: dict[str, Any] = {
        "documentId": "d1",
        "title": "Plan",
        "body": {
            "content": [
                {"sectionBreak": {}},
                paragraph("Plan\n", "TITLE"),
                paragraph("Goals\n", "HEADING_2"),
                paragraph("Ship it\n", bullet=True),
                {
                    "table": {
                        "tableRows": [
                            {"tableCells": [{"content": [paragraph("a\n")]}, {"content": [paragraph("b\n")]}]}
                        ]
                    }
                },
                paragraph("Done.\n"),
            ]
        },
    }
    google.respond(reply(body=document))
    envelope = await google.call("docs_read", documentId="d1")
    text = "# Plan\n## Goals\n- Ship it\n| a | b |\nDone."
    assert envelope == OkEnvelope(
        data={
            "documentId": "d1",
            "title": "Plan",
            "content": {"text": text, "totalChars": len(text), "truncated": False},
        }
    )
    assert google.sent == [Sent("GET", DOCS, "/v1/documents/d1", {}, None)]


async def test_docs_create_creates_then_inserts_the_text(google: FakeGoogle) -> None:
    google.respond(reply(body={"documentId": "d2", "title": "Notes"}), reply(body={"replies": [{}]}))
    envelope = await google.call("docs_create", title="Notes", text="Hello")
    assert envelope == OkEnvelope(data={"documentId": "d2", "title": "Notes"})
    assert google.sent == [
        Sent("POST", DOCS, "/v1/documents", {}, {"title": "Notes"}),
        Sent("POST", DOCS, "/v1/documents/d2:batchUpdate", {},
             {"requests": [{"insertText": {"text": "Hello", "endOfSegmentLocation": {}}}]}),
    ]  # fmt: skip


async def test_docs_append_inserts_at_the_end(google: FakeGoogle) -> None:
    google.respond(reply(body={"replies": [{}]}))
    envelope = await google.call("docs_append", documentId="d1", text="\nMore")
    assert envelope == OkEnvelope(data={"documentId": "d1", "appendedChars": 5})
    assert google.sent[0].body == {
        "requests": [{"insertText": {"text": "\nMore", "endOfSegmentLocation": {}}}]
    }


async def test_docs_replace_replaces_all_and_counts(google: FakeGoogle) -> None:
    google.respond(reply(body={"replies": [{"replaceAllText": {"occurrencesChanged": 3}}]}))
    envelope = await google.call("docs_replace", documentId="d1", findText="Q1", replaceText="Q2")
    assert envelope == OkEnvelope(data={"documentId": "d1", "occurrencesChanged": 3})
    assert google.sent == [
        Sent("POST", DOCS, "/v1/documents/d1:batchUpdate", {},
             {"requests": [{"replaceAllText": {"containsText": {"text": "Q1", "matchCase": True}, "replaceText": "Q2"}}]})
    ]  # fmt: skip
