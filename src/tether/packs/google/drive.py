"""Drive: drive_list, drive_read, drive_create, drive_update, drive_delete, drive_search.

Google Docs, Sheets and Slides are exported to Markdown, CSV and plain text; other text files are read as
they are; binary files are described, not dumped. Deleting moves a file to the trash (the user can restore
it for 30 days).

Retried creates never duplicate a file. Drive has no request id for `files.create`; what it offers is
`files.generateIds` (an id reserved for a later create, which then fails with 409 if repeated) and private
`appProperties` a query can match. The reserved id would have to be remembered across the retry, so
drive_create stamps each file with its call's tether idempotency key (from its declared fields) in `appProperties` and first asks
Drive for a file already carrying that key: a repeat answers with the file the first attempt made.
"""

from __future__ import annotations

import mimetypes
import os
from typing import Any

from tether.builtin import Roots
from tether.exceptions import ToolError
from tether.packs.google._kit import Kit, creation_key, page_size
from tether.packs.google._text import page_of
from tether.tools import Tool, ToolContext

__all__ = ["drive_tools", "drive_upload", "file_upload_tool"]

_READ = ("drive.readonly",)
_FIELDS = "id,name,mimeType,modifiedTime,size,webViewLink,parents"
_EXPORTS = {
    "application/vnd.google-apps.document": "text/markdown",
    "application/vnd.google-apps.spreadsheet": "text/csv",
    "application/vnd.google-apps.presentation": "text/plain",
    "application/vnd.google-apps.drawing": "image/svg+xml",
}
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-yaml")
_KEY = "tetherIdempotencyKey"
_CREATE_FIELDS = ("name", "content", "mimeType", "folderId")


def quoted(value: str) -> str:
    """A string literal for Drive's query language: backslashes and quotes escaped, so no query injection."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def drive_upload(
    kit: Kit, name: str, data: bytes, mime_type: str, folder_id: str | None, key: str
) -> dict[str, Any]:
    """Create a Drive file holding `data` once per `key` (see the module's docstring)."""
    from googleapiclient.http import MediaInMemoryUpload  # the google extra

    files = kit.api.resource("drive", "v3", "files")
    query = f"appProperties has {{ key='{_KEY}' and value={quoted(key)} }} and trashed = false"
    found = files.list(q=query, pageSize=1, fields=f"files({_FIELDS})").execute().get("files", [])
    if found:
        return {**found[0], "alreadyExisted": True}
    body: dict[str, Any] = {"name": name, "mimeType": mime_type, "appProperties": {_KEY: key}}
    if folder_id:
        body["parents"] = [folder_id]
    upload_type = "text/plain" if mime_type.startswith("application/vnd.google-apps.") else mime_type
    media = MediaInMemoryUpload(data, mimetype=upload_type, resumable=False)
    created = files.create(body=body, media_body=media, fields=_FIELDS).execute()
    return {**created, "alreadyExisted": False}


def drive_tools(kit: Kit) -> list[Tool[..., Any]]:
    def files() -> Any:
        return kit.api.resource("drive", "v3", "files")

    def listing(query: str, maxResults: int, pageToken: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {
            "q": query,
            "pageSize": page_size(maxResults),
            "fields": f"nextPageToken,files({_FIELDS})",
            "orderBy": "modifiedTime desc",
        }
        if pageToken:
            params["pageToken"] = pageToken
        found = files().list(**params).execute()
        out: dict[str, Any] = {"files": found.get("files", [])}
        if found.get("nextPageToken"):
            out["nextPageToken"] = found["nextPageToken"]
        return out

    @kit.tool("drive_list", _READ, "none")
    def drive_list(
        folderId: str | None = None, maxResults: int = 20, pageToken: str | None = None
    ) -> dict[str, Any]:
        """List files, newest first: in one folder, or everywhere.

        Args:
            folderId: The folder's id; all files when omitted.
            maxResults: How many (1-100).
            pageToken: The `nextPageToken` of the previous page.
        """
        query = "trashed = false" + (f" and {quoted(folderId)} in parents" if folderId else "")
        return listing(query, maxResults, pageToken)

    @kit.tool("drive_search", _READ, "none")
    def drive_search(query: str, maxResults: int = 20, pageToken: str | None = None) -> dict[str, Any]:
        """Search files by their name and content.

        Args:
            query: Words to look for.
            maxResults: How many (1-100).
            pageToken: The `nextPageToken` of the previous page.
        """
        return listing(f"fullText contains {quoted(query)} and trashed = false", maxResults, pageToken)

    @kit.tool("drive_read", _READ, "none")
    def drive_read(fileId: str, offset: int = 0) -> dict[str, Any]:
        """Read a file as text: Google Docs as Markdown, Sheets as CSV, Slides as plain text.

        Args:
            fileId: The file's id (from drive_list or drive_search).
            offset: Where to start reading a long file (the `nextOffset` of a truncated read).
        """
        meta = files().get(fileId=fileId, fields=_FIELDS).execute()
        mime = str(meta.get("mimeType", ""))
        if mime in _EXPORTS:
            raw = files().export(fileId=fileId, mimeType=_EXPORTS[mime]).execute()
        elif mime.startswith("text/") or mime in _TEXT_TYPES:
            raw = files().get_media(fileId=fileId).execute()
        else:
            return {**meta, "content": None, "notice": f"{mime} is not text; it was not read."}
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
        return {**meta, "content": page_of(text, offset, kit.max_chars)}

    @kit.tool("drive_create", ("drive.file",), "mutating", idempotency_fields=_CREATE_FIELDS)
    def drive_create(
        name: str,
        content: str = "",
        mimeType: str = "text/plain",
        folderId: str | None = None,
        context: ToolContext | None = None,
    ) -> dict[str, Any]:
        """Create a file; a retried call returns the file already made instead of a duplicate.

        Args:
            name: The file name.
            content: Its text.
            mimeType: e.g. `text/plain`, `text/markdown`, or `application/vnd.google-apps.document` to make
                a Google Doc from the text.
            folderId: The folder to create it in (default: My Drive).
        """
        arguments = {"name": name, "content": content, "mimeType": mimeType, "folderId": folderId}
        key = creation_key(context, "drive_create", _CREATE_FIELDS, arguments)
        return drive_upload(kit, name, content.encode(), mimeType, folderId, key)

    @kit.tool("drive_update", ("drive",), "idempotent")
    def drive_update(fileId: str, content: str) -> dict[str, Any]:
        """Replace a file's content with new text.

        Args:
            fileId: The file's id.
            content: The new text.
        """
        from googleapiclient.http import MediaInMemoryUpload  # the google extra

        meta = files().get(fileId=fileId, fields="mimeType").execute()
        mime = str(meta.get("mimeType", "text/plain"))
        upload = "text/plain" if mime.startswith("application/vnd.google-apps.") else mime
        media = MediaInMemoryUpload(content.encode(), mimetype=upload, resumable=False)
        return files().update(fileId=fileId, media_body=media, fields=_FIELDS).execute()

    @kit.tool("drive_delete", ("drive",), "mutating")
    def drive_delete(fileId: str, confirmed: bool = False) -> dict[str, Any]:
        """Move a file to the trash (restorable for 30 days).

        Args:
            fileId: The file's id.
            confirmed: The user has approved deleting this file.
        """
        kit.confirm_first("drive_delete", confirmed, f"Move the Drive file {fileId} to the trash?")
        done = files().update(fileId=fileId, body={"trashed": True}, fields="id,name,trashed").execute()
        return {**done, "deleted": True}

    return [drive_list, drive_search, drive_read, drive_create, drive_update, drive_delete]


_UPLOAD_FIELDS = ("path", "folderId", "name")
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
"""The largest file file_upload sends (a single multipart request)."""


def file_upload_tool(kit: Kit, roots: Roots) -> Tool[..., Any]:
    """Meowstik's `file_upload`: a workspace file to Drive, once per path, folder and name."""

    @kit.tool("file_upload", ("drive.file",), "mutating", idempotency_fields=_UPLOAD_FIELDS)
    def file_upload(
        path: str, folderId: str | None = None, name: str | None = None, context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Upload a file from the workspace to Google Drive; a retried call returns the file already uploaded.

        Args:
            path: The file, relative to the workspace.
            folderId: The Drive folder (default: My Drive).
            name: The name in Drive (default: the file's own name).
        """
        fd = roots.open(path, os.O_RDONLY, what="file")
        with os.fdopen(fd, "rb") as source:
            data = source.read(MAX_UPLOAD_BYTES + 1)
        if len(data) > MAX_UPLOAD_BYTES:
            raise ToolError(
                "TOO_LARGE",
                f"{path} is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MiB",
                recoverable=False,
                suggestion="Tell the user to upload it to Drive themselves.",
            )
        title = name or os.path.basename(path)
        mime = mimetypes.guess_type(title)[0] or "application/octet-stream"
        arguments = {"path": path, "folderId": folderId, "name": name}
        key = creation_key(context, "file_upload", _UPLOAD_FIELDS, arguments)
        return drive_upload(kit, title, data, mime, folderId, key)

    return file_upload
