"""Gmail: gmail_list, gmail_read, gmail_search, gmail_send (seed 000's names and parameters).

Messages come back as their headers plus a plain-text body (HTML converted), attachments listed by name,
type, size and id. Listing fetches each message's headers, so a model sees who wrote what without reading
every message.
"""

from __future__ import annotations

import base64
from email.message import EmailMessage
from typing import Any

from tether.exceptions import ToolError
from tether.packs.google._kit import Kit, page_size
from tether.packs.google._text import html_text, page_of
from tether.tools import Tool
from tether.types import ErrorCode

__all__ = ["gmail_tools"]

_READ = ("gmail.readonly",)
_HEADERS = ("From", "To", "Cc", "Subject", "Date")


def gmail_tools(kit: Kit) -> list[Tool[..., Any]]:
    def messages() -> Any:
        return kit.api.resource("gmail", "v1", "users", "messages")

    def summaries(
        query: str | None, labelIds: list[str] | None, maxResults: int, pageToken: str | None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"userId": "me", "maxResults": page_size(maxResults)}
        if query:
            params["q"] = query
        if labelIds:
            params["labelIds"] = labelIds
        if pageToken:
            params["pageToken"] = pageToken
        listing = messages().list(**params).execute()
        found = [
            _summary(
                messages()
                .get(userId="me", id=m["id"], format="metadata", metadataHeaders=list(_HEADERS))
                .execute()
            )
            for m in listing.get("messages", [])
        ]
        out: dict[str, Any] = {"messages": found}
        if listing.get("nextPageToken"):
            out["nextPageToken"] = listing["nextPageToken"]
        return out

    @kit.tool("gmail_list", _READ, "none")
    def gmail_list(
        maxResults: int = 10, labelIds: list[str] | None = None, pageToken: str | None = None
    ) -> dict[str, Any]:
        """List the newest emails: sender, subject, date and a snippet of each.

        Args:
            maxResults: How many (1-100).
            labelIds: Only messages with all these labels, e.g. ["INBOX", "UNREAD"].
            pageToken: The `nextPageToken` of the previous page.
        """
        return summaries(None, labelIds, maxResults, pageToken)

    @kit.tool("gmail_search", _READ, "none")
    def gmail_search(query: str, maxResults: int = 10, pageToken: str | None = None) -> dict[str, Any]:
        """Search emails with Gmail's query syntax, e.g. `from:ana@example.com is:unread newer_than:7d`.

        Args:
            query: A Gmail search query.
            maxResults: How many (1-100).
            pageToken: The `nextPageToken` of the previous page.
        """
        return summaries(query, None, maxResults, pageToken)

    @kit.tool("gmail_read", _READ, "none")
    def gmail_read(messageId: str, offset: int = 0) -> dict[str, Any]:
        """Read one email: its headers, its body as plain text, and its attachments.

        Args:
            messageId: The message's id (from gmail_list or gmail_search).
            offset: Where to start reading a long body (the `nextOffset` of a truncated read).
        """
        message = messages().get(userId="me", id=messageId, format="full").execute()
        payload: dict[str, Any] = message.get("payload", {})
        plain, html, attachments = _walk(payload)
        body = plain if plain.strip() else html_text(html) if html else ""
        return {
            "id": message.get("id"),
            "threadId": message.get("threadId"),
            "labelIds": message.get("labelIds", []),
            "headers": _headers(payload),
            "body": page_of(body, offset, kit.max_chars),
            "attachments": attachments,
        }

    @kit.tool("gmail_send", ("gmail.send",), "mutating")
    def gmail_send(
        to: str,
        subject: str,
        body: str,
        cc: str | None = None,
        threadId: str | None = None,
        inReplyTo: str | None = None,
        confirmed: bool = False,
    ) -> dict[str, Any]:
        """Send an email as the user.

        Args:
            to: Recipients, comma-separated.
            subject: The subject line.
            body: The plain-text body.
            cc: Copy recipients, comma-separated.
            threadId: Send as a reply in this thread.
            inReplyTo: The Message-ID header of the email answered (keeps the reply threaded for others).
            confirmed: The user has seen and approved this exact email.
        """
        for field, value in (("to", to), ("cc", cc), ("subject", subject), ("inReplyTo", inReplyTo)):
            if value and ("\r" in value or "\n" in value):  # a line break would start a header of its own
                raise ToolError(
                    ErrorCode.INVALID_ARGS,
                    f"`{field}` must be one line: a line break in a header could add recipients or headers",
                    suggestion=f"Call again with `{field}` on one line.",
                )
        kit.confirm_first("gmail_send", confirmed, f"Send the email {subject!r} to {to}?")
        mail = EmailMessage()
        mail["To"] = to
        if cc:
            mail["Cc"] = cc
        mail["Subject"] = subject
        if inReplyTo:
            mail["In-Reply-To"] = inReplyTo
            mail["References"] = inReplyTo
        mail.set_content(body)
        request: dict[str, Any] = {"raw": base64.urlsafe_b64encode(mail.as_bytes()).decode()}
        if threadId:
            request["threadId"] = threadId
        sent = messages().send(userId="me", body=request).execute()
        return {"id": sent.get("id"), "threadId": sent.get("threadId"), "labelIds": sent.get("labelIds", [])}

    return [gmail_list, gmail_search, gmail_read, gmail_send]


def _headers(payload: dict[str, Any]) -> dict[str, str]:
    wanted = {h.lower(): h for h in (*_HEADERS, "Message-ID")}
    out: dict[str, str] = {}
    for header in payload.get("headers", []):
        name = wanted.get(str(header.get("name", "")).lower())
        if name is not None and name not in out:
            out[name] = str(header.get("value", ""))
    return out


def _summary(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": message.get("id"),
        "threadId": message.get("threadId"),
        **_headers(message.get("payload", {})),
        "snippet": message.get("snippet", ""),
        "unread": "UNREAD" in message.get("labelIds", []),
    }


def _walk(part: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
    """The first text/plain and text/html bodies of a MIME tree, and its attachments."""
    plain, html = "", ""
    attachments: list[dict[str, Any]] = []
    stack = [part]
    while stack:
        current = stack.pop(0)
        mime = str(current.get("mimeType", ""))
        body: dict[str, Any] = current.get("body", {})
        if current.get("filename"):
            attachments.append(
                {
                    "filename": current["filename"],
                    "mimeType": mime,
                    "size": body.get("size", 0),
                    "attachmentId": body.get("attachmentId"),
                }
            )
        elif mime == "text/plain" and not plain:
            plain = _decode(body.get("data", ""))
        elif mime == "text/html" and not html:
            html = _decode(body.get("data", ""))
        stack.extend(current.get("parts", []))
    return plain, html, attachments


def _decode(data: str) -> str:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)).decode("utf-8", errors="replace")
