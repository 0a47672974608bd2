"""The google and meowstik packs register like third-party packs and cost nothing until used."""

import subprocess
import sys

import pytest

from tether.builtin import PackConfig, build_tools, packs
from tether.tools import export_tools

SEED_000: dict[str, set[str]] = {
    "gmail_list": {"maxResults", "labelIds"}, "gmail_read": {"messageId"}, "gmail_send": {"to", "subject", "body"},
    "gmail_search": {"query", "maxResults"}, "drive_list": {"folderId", "maxResults"}, "drive_read": {"fileId"},
    "drive_create": {"name", "content", "mimeType"}, "drive_update": {"fileId", "content"},
    "drive_delete": {"fileId"}, "drive_search": {"query", "maxResults"}, "calendar_list": set(),
    "calendar_events": {"calendarId", "timeMin", "timeMax"}, "calendar_create": {"summary", "start", "end"},
    "calendar_update": {"eventId", "summary"}, "calendar_delete": {"eventId"}, "docs_read": {"documentId"},
    "docs_create": {"title", "text"}, "docs_append": {"documentId", "text"},
    "docs_replace": {"documentId", "findText", "replaceText"}, "sheets_read": {"spreadsheetId", "range"},
    "sheets_write": {"spreadsheetId", "range", "values"}, "sheets_append": {"spreadsheetId", "range", "values"},
    "sheets_create": {"title"}, "sheets_clear": {"spreadsheetId", "range"}, "tasks_list": {"taskListId"},
    "tasks_get": {"taskListId", "taskId"}, "tasks_create": {"taskListId", "title", "notes"},
    "tasks_update": {"taskListId", "taskId", "title"}, "tasks_complete": {"taskListId", "taskId"},
    "tasks_delete": {"taskListId", "taskId"},
}  # fmt: skip
"""Seed 000's tool types and their key parameters."""


def test_every_seed_tool_exists_with_its_parameters_for_native_tool_calling() -> None:
    pytest.importorskip("googleapiclient", reason="the google extra is not installed")
    tools = build_tools(["google"], PackConfig())
    exported = {t["function"]["name"]: t["function"]["parameters"] for t in export_tools(tools, "openai")}
    assert set(exported) == set(SEED_000)
    for name, parameters in SEED_000.items():
        assert parameters <= set(exported[name]["properties"]), name


def test_read_tools_never_ask_for_write_scopes_and_deletes_are_mutating() -> None:
    pytest.importorskip("googleapiclient", reason="the google extra is not installed")
    specs = build_tools(["google"], PackConfig()).specs()
    for spec in specs:
        if spec.side_effects == "none":
            assert all(s.endswith("readonly") for s in spec.scopes), spec.name
        if spec.name.endswith("_delete") or spec.name == "gmail_send":
            assert spec.side_effects == "mutating", spec.name


def test_both_packs_come_from_entry_points() -> None:
    found = packs()
    assert {"google", "meowstik"} <= set(found)
    assert found["google"].description.startswith("Gmail, Drive, Calendar")


def test_importing_the_packs_imports_nothing_of_googles() -> None:
    code = (
        "import sys, tether.packs.google, tether.packs.meowstik; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('google', 'googleapiclient', 'httplib2', 'httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_without_the_extra_building_the_pack_names_the_fix() -> None:
    code = (
        "import sys; sys.modules['googleapiclient'] = None\n"
        "from tether.exceptions import UserError\n"
        "from tether.packs.google import google_pack\n"
        "try:\n    google_pack()\nexcept UserError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'tether[google]'" in out


def test_a_collection_is_made_once_per_thread() -> None:
    pytest.importorskip("googleapiclient", reason="the google extra is not installed")
    from googleapiclient.http import HttpMockSequence

    from tether.packs.google import GoogleApi

    api = GoogleApi(http=HttpMockSequence([]))
    assert api.resource("tasks", "v1", "tasks") is api.resource("tasks", "v1", "tasks")
    assert api.resource("gmail", "v1", "users", "messages") is not api.resource("gmail", "v1", "users")
