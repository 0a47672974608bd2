"""Gmail tools through the real client: the requests it sends and the envelopes the model gets."""

import base64
import email
import email.policy
from typing import Any

import pytest

from tether.types import ErrorEnvelope, NeedsEnvelope, OkEnvelope

from .conftest import FakeGoogle, Sent, reply

pytestmark = pytest.mark.anyio

GMAIL = "gmail.googleapis.com"
MESSAGES = "/gmail/v1/users/me/messages"


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def metadata(message_id: str, sender: str, subject: str, unread: bool = True) -> dict[str, object]:
    return {
        "id": message_id,
        "threadId": f"t{message_id}",
        "labelIds": ["INBOX", "UNREAD"] if unread else ["INBOX"],
        "snippet": f"about {subject}",
        "payload": {"headers": [{"name": "From", "value": sender}, {"name": "Subject", "value": subject}]},
    }


async def test_gmail_list_sends_the_listing_then_one_metadata_get_per_message(google: FakeGoogle) -> None:
    google.respond(
        reply(body={"messages": [{"id": "m1"}, {"id": "m2"}], "nextPageToken": "p2"}),
        reply(body=metadata("m1", "Ana <ana@example.com>", "Lunch")),
        reply(body=metadata("m2", "Bo <bo@example.com>", "Report", unread=False)),
    )
    envelope = await google.call("gmail_list", maxResults=2, labelIds=["INBOX"])
    assert envelope == OkEnvelope(
        data={
            "messages": [
                {"id": "m1", "threadId": "tm1", "From": "Ana <ana@example.com>", "Subject": "Lunch",
                 "snippet": "about Lunch", "unread": True},
                {"id": "m2", "threadId": "tm2", "From": "Bo <bo@example.com>", "Subject": "Report",
                 "snippet": "about Report", "unread": False},
            ],
            "nextPageToken": "p2",
        }
    )  # fmt: skip
    headers = ["From", "To", "Cc", "Subject", "Date"]
    assert google.sent == [
        Sent("GET", GMAIL, MESSAGES, {"maxResults": "2", "labelIds": "INBOX"}, None),
        Sent("GET", GMAIL, f"{MESSAGES}/m1", {"format": "metadata", "metadataHeaders": headers}, None),
        Sent("GET", GMAIL, f"{MESSAGES}/m2", {"format": "metadata", "metadataHeaders": headers}, None),
    ]


async def test_gmail_search_passes_the_query_and_pages(google: FakeGoogle) -> None:
    google.respond(reply(body={"resultSizeEstimate": 0}))
    envelope = await google.call("gmail_search", query="from:ana is:unread", maxResults=500, pageToken="p2")
    assert envelope == OkEnvelope(data={"messages": []})
    assert google.sent == [
        Sent(
            "GET", GMAIL, MESSAGES, {"q": "from:ana is:unread", "maxResults": "100", "pageToken": "p2"}, None
        )
    ]


async def test_gmail_read_gives_headers_a_plain_text_body_from_html_and_lists_attachments(
    google: FakeGoogle,
) -> None:
    html = "<html><body><h1>Invoice</h1><p>Please pay <b>now</b>. <a href='https://pay.example.com'>Pay</a></p></body></html>"
    google.respond(
        reply(
            body={
                "id": "m1",
                "threadId": "t1",
                "labelIds": ["INBOX"],
                "payload": {
                    "mimeType": "multipart/mixed",
                    "headers": [
                        {"name": "From", "value": "Ana <ana@example.com>"},
                        {"name": "Subject", "value": "Invoice"},
                        {"name": "Message-ID", "value": "<abc@example.com>"},
                        {"name": "X-Spam", "value": "no"},
                    ],
                    "parts": [
                        {"mimeType": "text/html", "body": {"data": b64(html), "size": len(html)}},
                        {"mimeType": "application/pdf", "filename": "invoice.pdf",
                         "body": {"attachmentId": "att1", "size": 2048}},
                    ],
                },
            }
        )
    )  # fmt: skip
    envelope = await google.call("gmail_read", messageId="m1")
    assert envelope == OkEnvelope(
        data={
            "id": "m1",
            "threadId": "t1",
            "labelIds": ["INBOX"],
            "headers": {
                "From": "Ana <ana@example.com>",
                "Subject": "Invoice",
                "Message-ID": "<abc@example.com>",
            },
            "body": {
                "text": "# Invoice\n\nPlease pay **now**. [Pay](https://pay.example.com)",
                "totalChars": 61,
                "truncated": False,
            },
            "attachments": [
                {
                    "filename": "invoice.pdf",
                    "mimeType": "application/pdf",
                    "size": 2048,
                    "attachmentId": "att1",
                }
            ],
        }
    )
    assert google.sent == [Sent("GET", GMAIL, f"{MESSAGES}/m1", {"format": "full"}, None)]


async def test_a_long_body_is_capped_with_a_notice_and_read_on_from_its_offset(google: FakeGoogle) -> None:
    text = "x" * 25_000
    message = {"id": "m1", "payload": {"mimeType": "text/plain", "body": {"data": b64(text)}}}
    google.respond(reply(body=message), reply(body=message))
    first = await google.call("gmail_read", messageId="m1")
    assert isinstance(first, OkEnvelope)
    body = first.data["body"]
    assert (len(body["text"]), body["truncated"], body["nextOffset"]) == (20_000, True, 20_000)
    assert body["notice"] == (
        "[truncated: showing characters 0-20000 of 25000; call again with offset=20000 for more]"
    )
    rest = await google.call("gmail_read", messageId="m1", offset=20_000)
    assert isinstance(rest, OkEnvelope)
    assert (len(rest.data["body"]["text"]), rest.data["body"]["truncated"]) == (5_000, False)


async def test_gmail_send_asks_the_user_first_by_default_and_sends_nothing(google: FakeGoogle) -> None:
    envelope = await google.call("gmail_send", to="bo@example.com", subject="Hi", body="Hello")
    assert envelope == NeedsEnvelope(
        needs={
            "confirm": "Send the email 'Hi' to bo@example.com? Call again with confirmed=true once the user agrees."
        }
    )
    assert google.sent == []


async def test_gmail_send_once_confirmed_sends_one_mime_message_in_the_thread(google: FakeGoogle) -> None:
    google.respond(reply(body={"id": "s1", "threadId": "t1", "labelIds": ["SENT"]}))
    envelope = await google.call(
        "gmail_send", to="bo@example.com", subject="Re: Lunch", body="Yes, 1pm.", threadId="t1",
        inReplyTo="<abc@example.com>", confirmed=True,
    )  # fmt: skip
    assert envelope == OkEnvelope(data={"id": "s1", "threadId": "t1", "labelIds": ["SENT"]})
    [sent] = google.sent
    assert (sent.method, sent.path, sent.query) == ("POST", f"{MESSAGES}/send", {})
    assert sent.body["threadId"] == "t1"
    mail = email.message_from_bytes(base64.urlsafe_b64decode(sent.body["raw"]), policy=email.policy.default)
    assert (mail["To"], mail["Subject"], mail["In-Reply-To"]) == (
        "bo@example.com",
        "Re: Lunch",
        "<abc@example.com>",
    )
    assert mail.get_content() == "Yes, 1pm.\n"


async def test_gmail_send_is_mutating_and_read_tools_ask_only_for_the_read_scope(google: FakeGoogle) -> None:
    specs = {s.name: s for s in google.tools.specs()}
    assert specs["gmail_send"].side_effects == "mutating"
    assert specs["gmail_send"].scopes == ("google:gmail.send",)
    for name in ("gmail_list", "gmail_read", "gmail_search"):
        assert (specs[name].side_effects, specs[name].scopes) == ("none", ("google:gmail.readonly",))


@pytest.mark.parametrize("field", ["to", "subject", "cc", "inReplyTo"])
async def test_a_line_break_in_a_header_cannot_add_recipients(google: FakeGoogle, field: str) -> None:
    arguments: dict[str, Any] = {"to": "bo@example.com", "subject": "Hi", "body": "Hello", "confirmed": True}
    arguments[field] = "bo@example.com\r\nBcc: attacker@example.com"
    envelope = await google.call("gmail_send", **arguments)
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "INVALID_ARGS"
    assert google.sent == []


async def test_scripts_styles_and_tracking_images_do_not_reach_the_model(google: FakeGoogle) -> None:
    html = '<style>p{}</style><script>alert(1)</script><p>Hi <img src="https://track.example/p.gif">there</p>'
    google.respond(
        reply(body={"id": "m1", "payload": {"mimeType": "text/html", "body": {"data": b64(html)}}})
    )
    envelope = await google.call("gmail_read", messageId="m1")
    assert isinstance(envelope, OkEnvelope)
    assert envelope.data["body"]["text"] == "Hi there"
