"""Sheets tools through the real client: ranges as rows, paged; writes with USER_ENTERED values."""

import pytest

from tether.types import NeedsEnvelope, OkEnvelope

from .conftest import FakeGoogle, Sent, reply

pytestmark = pytest.mark.anyio

SHEETS = "sheets.googleapis.com"
VALUES = "/v4/spreadsheets/s1/values"  # ranges travel percent-encoded in the path


async def test_sheets_read_returns_rows(google: FakeGoogle) -> None:
    google.respond(reply(body={"range": "Sheet1!A1:B2", "values": [["a", "b"], ["1", "2"]]}))
    envelope = await google.call("sheets_read", spreadsheetId="s1", range="Sheet1!A1:B2")
    assert envelope == OkEnvelope(
        data={"range": "Sheet1!A1:B2", "rows": [["a", "b"], ["1", "2"]], "totalRows": 2}
    )
    assert google.sent == [Sent("GET", SHEETS, f"{VALUES}/Sheet1%21A1%3AB2", {}, None)]


async def test_a_large_range_is_capped_with_a_notice_and_an_offset(google: FakeGoogle) -> None:
    rows = [[str(i)] for i in range(600)]
    google.respond(
        reply(body={"range": "Sheet1", "values": rows}), reply(body={"range": "Sheet1", "values": rows})
    )
    first = await google.call("sheets_read", spreadsheetId="s1", range="Sheet1")
    assert isinstance(first, OkEnvelope)
    assert (len(first.data["rows"]), first.data["nextOffset"]) == (500, 500)
    assert first.data["notice"] == "[truncated: rows 0-500 of 600; call again with offset=500]"
    rest = await google.call("sheets_read", spreadsheetId="s1", range="Sheet1", offset=500)
    assert isinstance(rest, OkEnvelope)
    assert rest.data["rows"][0] == ["500"]
    assert "truncated" not in rest.data


async def test_sheets_write_updates_with_user_entered_values(google: FakeGoogle) -> None:
    google.respond(reply(body={"updatedRange": "Sheet1!A1:B1", "updatedRows": 1, "updatedCells": 2, "x": 1}))
    envelope = await google.call("sheets_write", spreadsheetId="s1", range="Sheet1!A1", values=[["a", 1]])
    assert envelope == OkEnvelope(data={"updatedRange": "Sheet1!A1:B1", "updatedRows": 1, "updatedCells": 2})
    assert google.sent == [
        Sent(
            "PUT",
            SHEETS,
            f"{VALUES}/Sheet1%21A1",
            {"valueInputOption": "USER_ENTERED"},
            {"values": [["a", 1]]},
        )
    ]


async def test_sheets_append_inserts_rows(google: FakeGoogle) -> None:
    google.respond(reply(body={"updates": {"updatedRange": "Sheet1!A3:B3", "updatedRows": 1}}))
    envelope = await google.call(
        "sheets_append", spreadsheetId="s1", range="Sheet1!A:B", values=[["x", "=1+1"]]
    )
    assert envelope == OkEnvelope(data={"updatedRange": "Sheet1!A3:B3", "updatedRows": 1})
    assert google.sent == [
        Sent("POST", SHEETS, f"{VALUES}/Sheet1%21A%3AB:append",
             {"valueInputOption": "USER_ENTERED", "insertDataOption": "INSERT_ROWS"}, {"values": [["x", "=1+1"]]})
    ]  # fmt: skip


async def test_sheets_create_makes_a_spreadsheet(google: FakeGoogle) -> None:
    google.respond(reply(body={"spreadsheetId": "s9", "spreadsheetUrl": "https://docs.google.com/s9"}))
    envelope = await google.call("sheets_create", title="Budget")
    assert envelope == OkEnvelope(
        data={"spreadsheetId": "s9", "url": "https://docs.google.com/s9", "title": "Budget"}
    )
    assert google.sent == [
        Sent("POST", SHEETS, "/v4/spreadsheets", {"fields": "spreadsheetId,spreadsheetUrl,properties.title"},
             {"properties": {"title": "Budget"}})
    ]  # fmt: skip


async def test_sheets_clear_asks_first_then_clears(google: FakeGoogle) -> None:
    assert isinstance(
        await google.call("sheets_clear", spreadsheetId="s1", range="Sheet1!A2:D"), NeedsEnvelope
    )
    google.respond(reply(body={"clearedRange": "Sheet1!A2:D100"}))
    done = await google.call(
        "sheets_clear", call_id="c2", spreadsheetId="s1", range="Sheet1!A2:D", confirmed=True
    )
    assert done == OkEnvelope(data={"clearedRange": "Sheet1!A2:D100"})
    assert google.sent == [Sent("POST", SHEETS, f"{VALUES}/Sheet1%21A2%3AD:clear", {}, {})]
