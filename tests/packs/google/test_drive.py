"""Drive tools through the real client: exact requests, exports as text, and creates that never duplicate."""

from pathlib import Path
from typing import Any

import pytest

from tether.types import NeedsEnvelope, OkEnvelope

from .conftest import FakeGoogle, Sent, reply

pytestmark = pytest.mark.anyio

DRIVE = "www.googleapis.com"
FILES = "/drive/v3/files"
FIELDS = "id,name,mimeType,modifiedTime,size,webViewLink,parents"


async def test_drive_list_lists_one_folder_newest_first(google: FakeGoogle) -> None:
    google.respond(reply(body={"files": [{"id": "f1", "name": "a.txt"}], "nextPageToken": "n"}))
    envelope = await google.call("drive_list", folderId="fold'er", maxResults=5)
    assert envelope == OkEnvelope(data={"files": [{"id": "f1", "name": "a.txt"}], "nextPageToken": "n"})
    assert google.sent == [
        Sent("GET", DRIVE, FILES, {"q": "trashed = false and 'fold\\'er' in parents", "pageSize": "5",
             "fields": f"nextPageToken,files({FIELDS})", "orderBy": "modifiedTime desc"}, None)
    ]  # fmt: skip


async def test_drive_search_escapes_the_query_so_it_cannot_widen_the_search(google: FakeGoogle) -> None:
    google.respond(reply(body={"files": [{"id": "f2", "name": "x.txt"}]}))
    envelope = await google.call("drive_search", query="x' or name contains '", maxResults=3)
    assert envelope == OkEnvelope(data={"files": [{"id": "f2", "name": "x.txt"}]})
    assert google.sent == [
        Sent("GET", DRIVE, FILES, {"q": "fullText contains 'x\\' or name contains \\'' and trashed = false",
             "pageSize": "3", "fields": f"nextPageToken,files({FIELDS})", "orderBy": "modifiedTime desc"}, None)
    ]  # fmt: skip


async def test_drive_read_exports_a_google_doc_as_markdown(google: FakeGoogle) -> None:
    meta = {"id": "d1", "name": "Plan", "mimeType": "application/vnd.google-apps.document"}
    google.respond(reply(body=meta), ({"status": "200"}, "# Plan\n\n- ship it\n"))
    envelope = await google.call("drive_read", fileId="d1")
    assert envelope == OkEnvelope(
        data={**meta, "content": {"text": "# Plan\n\n- ship it\n", "totalChars": 18, "truncated": False}}
    )
    assert google.sent == [
        Sent("GET", DRIVE, f"{FILES}/d1", {"fields": FIELDS}, None),
        Sent("GET", DRIVE, f"{FILES}/d1/export", {"mimeType": "text/markdown"}, None),
    ]


async def test_drive_read_reads_text_files_and_describes_binary_ones(google: FakeGoogle) -> None:
    google.respond(
        reply(body={"id": "t1", "mimeType": "text/csv"}),
        ({"status": "200"}, "a,b\n1,2\n"),
        reply(body={"id": "p1", "mimeType": "image/png"}),
    )
    text = await google.call("drive_read", fileId="t1")
    assert isinstance(text, OkEnvelope)
    assert text.data["content"]["text"] == "a,b\n1,2\n"
    assert google.sent[1] == Sent("GET", DRIVE, f"{FILES}/t1", {"alt": "media"}, None)
    image = await google.call("drive_read", fileId="p1")
    assert image == OkEnvelope(
        data={
            "id": "p1",
            "mimeType": "image/png",
            "content": None,
            "notice": "image/png is not text; it was not read.",
        }
    )


async def test_drive_create_stamps_its_idempotency_key_and_a_retry_returns_the_same_file(
    google: FakeGoogle,
) -> None:
    created = {"id": "new1", "name": "notes.md", "mimeType": "text/markdown"}
    google.respond(reply(body={"files": []}), reply(body=created))
    first = await google.call("drive_create", name="notes.md", content="# Notes", mimeType="text/markdown")
    assert first == OkEnvelope(data={**created, "alreadyExisted": False})
    lookup, upload = google.sent
    assert (lookup.method, lookup.path) == ("GET", FILES)
    key = lookup.query["q"].split("value='")[1].split("'")[0]
    assert lookup.query["q"] == (
        f"appProperties has {{ key='tetherIdempotencyKey' and value='{key}' }} and trashed = false"
    )
    assert (upload.method, upload.path, upload.query) == (
        "POST",
        f"/upload{FILES}",
        {"fields": FIELDS, "uploadType": "multipart"},
    )
    assert '"appProperties": {"tetherIdempotencyKey": "' + key + '"}' in upload.body
    assert "# Notes" in upload.body

    # the journal lost the result (a crash): a retry under a new call id finds the file instead of making one
    google.executor = type(google.executor)(google.tools)
    google.respond(reply(body={"files": [created]}))
    again = await google.call(
        "drive_create", call_id="c2", name="notes.md", content="# Notes", mimeType="text/markdown"
    )
    assert again == OkEnvelope(data={**created, "alreadyExisted": True})
    assert google.sent[2].query["q"] == lookup.query["q"]
    assert len(google.sent) == 3


async def test_drive_update_replaces_the_content_with_the_files_own_type(google: FakeGoogle) -> None:
    google.respond(reply(body={"mimeType": "text/plain"}), reply(body={"id": "f1", "name": "a.txt"}))
    envelope = await google.call("drive_update", fileId="f1", content="new text")
    assert envelope == OkEnvelope(data={"id": "f1", "name": "a.txt"})
    get, update = google.sent
    assert (get.method, get.path, get.query) == ("GET", f"{FILES}/f1", {"fields": "mimeType"})
    assert (update.method, update.path) == ("PATCH", f"/upload{FILES}/f1")
    assert "new text" in update.body


async def test_drive_delete_asks_first_then_moves_the_file_to_the_trash(google: FakeGoogle) -> None:
    asked = await google.call("drive_delete", fileId="f1")
    assert isinstance(asked, NeedsEnvelope)
    assert google.sent == []
    google.respond(reply(body={"id": "f1", "name": "a.txt", "trashed": True}))
    done = await google.call("drive_delete", call_id="c2", fileId="f1", confirmed=True)
    assert done == OkEnvelope(data={"id": "f1", "name": "a.txt", "trashed": True, "deleted": True})
    assert google.sent == [
        Sent("PATCH", DRIVE, f"{FILES}/f1", {"fields": "id,name,trashed"}, {"trashed": True})
    ]


async def test_file_upload_sends_a_workspace_file_once_and_refuses_paths_outside(tmp_path: Path) -> None:
    from googleapiclient.http import HttpMockSequence

    from tether.execution import Executor, Principal, Run
    from tether.packs.google import google_pack, principal_scopes
    from tether.types import ErrorEnvelope, ToolCall

    (tmp_path / "report.csv").write_text("a,b\n1,2\n")
    created = {"id": "u1", "name": "report.csv", "mimeType": "text/csv"}
    http = HttpMockSequence([reply(body={"files": []}), reply(body=created)])
    executor = Executor(google_pack(http=http, roots=[tmp_path]))
    run = Run(principal=Principal(id="ana", scopes=principal_scopes(["drive.file"])))
    envelope = await executor.execute(
        ToolCall(id="u", name="file_upload", arguments={"path": "report.csv"}), run
    )
    assert envelope == OkEnvelope(data={**created, "alreadyExisted": False})
    mock: Any = http  # untyped
    body = mock.request_sequence[1][2].decode()
    assert "\n\na,b\n1,2\n\n--" in body
    assert '"mimeType": "text/csv"' in body
    outside = await executor.execute(ToolCall(id="v", name="file_upload", arguments={"path": "../x"}), run)
    assert isinstance(outside, ErrorEnvelope)
    assert outside.error.code == "PERMISSION_DENIED"
