"""A Meowstik turn (seed 000) end to end: a scripted model writing `toolCalls` JSON lists the inbox, reads one
email, drafts a reply with send_chat and ends with end_turn, over the real client and a mocked HTTP layer."""

import base64
import json
from typing import Any

import pytest

from tether import Agent, EndTurn, ScriptedModel
from tether.types import OkEnvelope

from .conftest import FakeGoogle, reply

pytestmark = pytest.mark.anyio


def turn(*calls: tuple[str, str, dict[str, Any]]) -> str:
    return json.dumps(
        {"toolCalls": [{"type": t, "id": i, "operation": t, "parameters": p} for t, i, p in calls]}
    )


async def test_list_read_draft_and_end_turn(google: FakeGoogle) -> None:
    body = base64.urlsafe_b64encode(b"Can we move lunch to 1pm?").decode()
    google.respond(
        reply(body={"messages": [{"id": "m1"}]}),
        reply(body={"id": "m1", "threadId": "t1", "labelIds": ["UNREAD"], "snippet": "Can we move lunch",
                    "payload": {"headers": [{"name": "From", "value": "Bo <bo@example.com>"},
                                            {"name": "Subject", "value": "Lunch"}]}}),
        reply(body={"id": "m1", "threadId": "t1", "payload": {
            "mimeType": "text/plain", "headers": [{"name": "Subject", "value": "Lunch"}], "body": {"data": body}}}),
    )  # fmt: skip
    draft = "Draft reply to Bo:\n\nHi Bo, 1pm works for me."
    model = ScriptedModel(
        [
            turn(
                ("send_chat", "c1", {"content": "Checking your inbox..."}),
                ("gmail_list", "g1", {"maxResults": 5}),
            ),
            turn(("gmail_read", "g2", {"messageId": "m1"})),
            turn(("send_chat", "c2", {"content": draft}), ("end_turn", "e1", {})),
        ]
    )
    agent = Agent(
        model, google.tools, dialect="json_calls", termination=EndTurn(), principal=google.principal
    )
    result = await agent.run("Anything from Bo? Draft a reply.")

    assert (result.output, result.reason) == (draft, "end_turn")
    assert [e.data for e in result.events if e.event == "chat"] == ["Checking your inbox...", draft]
    envelopes = {m.call_id: m.envelope for m in result.messages if m.kind == "tool_result"}
    listed, read = envelopes["g1"], envelopes["g2"]
    assert isinstance(listed, OkEnvelope)
    assert listed.data["messages"][0]["From"] == "Bo <bo@example.com>"
    assert isinstance(read, OkEnvelope)
    assert read.data["body"]["text"] == "Can we move lunch to 1pm?"
    assert [s.path.rsplit("/", 1)[-1] for s in google.sent] == ["messages", "m1", "m1"]
    started = [e.call.name for e in result.events if e.event == "on_tool_start"]
    assert started == ["send_chat", "gmail_list", "gmail_read", "send_chat", "end_turn"]  # nothing was sent
