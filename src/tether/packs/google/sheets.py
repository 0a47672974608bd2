"""Sheets: sheets_read (ranges as rows), sheets_write, sheets_append, sheets_create, sheets_clear."""

from __future__ import annotations

from typing import Any

from tether.packs.google._kit import Kit
from tether.tools import Tool

__all__ = ["sheets_tools"]

_WRITE = ("spreadsheets",)
MAX_ROWS = 500
"""The most rows one sheets_read returns; the rest is one `offset` away."""

Cell = str | int | float | bool | None


def sheets_tools(kit: Kit) -> list[Tool[..., Any]]:
    def ranges() -> Any:  # `values` is the seed's parameter name
        return kit.api.resource("sheets", "v4", "spreadsheets", "values")

    @kit.tool("sheets_read", ("spreadsheets.readonly",), "none")
    def sheets_read(spreadsheetId: str, range: str, offset: int = 0) -> dict[str, Any]:
        """Read a range as rows of cells (as the sheet shows them).

        Args:
            spreadsheetId: The spreadsheet's id.
            range: A1 notation, e.g. `Sheet1!A1:D20` or `Sheet1`.
            offset: The first row to return (the `nextOffset` of a truncated read).
        """
        found = ranges().get(spreadsheetId=spreadsheetId, range=range).execute()
        rows: list[list[Any]] = found.get("values", [])
        start = max(0, offset)
        page = rows[start : start + MAX_ROWS]
        out: dict[str, Any] = {"range": found.get("range", range), "rows": page, "totalRows": len(rows)}
        end = start + len(page)
        if end < len(rows):
            out["truncated"] = True
            out["nextOffset"] = end
            out["notice"] = f"[truncated: rows {start}-{end} of {len(rows)}; call again with offset={end}]"
        return out

    @kit.tool("sheets_write", _WRITE, "idempotent")
    def sheets_write(spreadsheetId: str, range: str, values: list[list[Cell]]) -> dict[str, Any]:
        """Write rows into a range, replacing what is there (formulas like `=SUM(A1:A3)` are evaluated).

        Args:
            spreadsheetId: The spreadsheet's id.
            range: Where the top-left cell goes, in A1 notation, e.g. `Sheet1!A1`.
            values: Rows of cells.
        """
        done = (
            ranges()
            .update(
                spreadsheetId=spreadsheetId,
                range=range,
                valueInputOption="USER_ENTERED",
                body={"values": values},
            )
            .execute()
        )
        keys = ("updatedRange", "updatedRows", "updatedCells")
        return {k: done[k] for k in keys if k in done}

    @kit.tool("sheets_append", _WRITE, "mutating")
    def sheets_append(spreadsheetId: str, range: str, values: list[list[Cell]]) -> dict[str, Any]:
        """Add rows after the last row of a table.

        Args:
            spreadsheetId: The spreadsheet's id.
            range: The table, e.g. `Sheet1!A:D`.
            values: Rows of cells.
        """
        done = (
            ranges()
            .append(
                spreadsheetId=spreadsheetId,
                range=range,
                valueInputOption="USER_ENTERED",
                insertDataOption="INSERT_ROWS",
                body={"values": values},
            )
            .execute()
        )
        updates: dict[str, Any] = done.get("updates", {})
        return {k: updates[k] for k in ("updatedRange", "updatedRows", "updatedCells") if k in updates}

    @kit.tool("sheets_create", _WRITE, "mutating")
    def sheets_create(title: str) -> dict[str, Any]:
        """Create a spreadsheet.

        Args:
            title: Its title.
        """
        sheets = kit.api.resource("sheets", "v4", "spreadsheets")
        created = sheets.create(
            body={"properties": {"title": title}}, fields="spreadsheetId,spreadsheetUrl,properties.title"
        ).execute()
        return {
            "spreadsheetId": created.get("spreadsheetId"),
            "url": created.get("spreadsheetUrl"),
            "title": title,
        }

    @kit.tool("sheets_clear", _WRITE, "idempotent")
    def sheets_clear(spreadsheetId: str, range: str, confirmed: bool = False) -> dict[str, Any]:
        """Erase the values in a range (formatting stays).

        Args:
            spreadsheetId: The spreadsheet's id.
            range: A1 notation, e.g. `Sheet1!A2:D100`.
            confirmed: The user has approved erasing this range.
        """
        kit.confirm_first("sheets_clear", confirmed, f"Erase the values in {range}?")
        done = ranges().clear(spreadsheetId=spreadsheetId, range=range, body={}).execute()
        return {"clearedRange": done.get("clearedRange", range)}

    return [sheets_read, sheets_write, sheets_append, sheets_create, sheets_clear]
