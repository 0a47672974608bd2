"""Tasks tools through the real client."""

import pytest

from tether.types import ErrorEnvelope, NeedsEnvelope, OkEnvelope

from .conftest import FakeGoogle, Sent, reply

pytestmark = pytest.mark.anyio

TASKS = "tasks.googleapis.com"
LIST = "/tasks/v1/lists/%40default/tasks"


async def test_tasks_list_lists_open_tasks(google: FakeGoogle) -> None:
    google.respond(
        reply(body={"items": [{"id": "t1", "title": "Pay rent", "status": "needsAction", "etag": "x"}]})
    )
    envelope = await google.call("tasks_list")
    assert envelope == OkEnvelope(
        data={"tasks": [{"id": "t1", "title": "Pay rent", "status": "needsAction"}]}
    )
    assert google.sent == [Sent("GET", TASKS, LIST, {"showCompleted": "false", "maxResults": "50"}, None)]


async def test_tasks_get_gets_one(google: FakeGoogle) -> None:
    google.respond(reply(body={"id": "t1", "title": "Pay rent"}))
    assert await google.call("tasks_get", taskListId="@default", taskId="t1") == OkEnvelope(
        data={"id": "t1", "title": "Pay rent"}
    )
    assert google.sent == [Sent("GET", TASKS, f"{LIST}/t1", {}, None)]


async def test_tasks_create_inserts(google: FakeGoogle) -> None:
    google.respond(reply(body={"id": "t2", "title": "Call Bo", "notes": "re: lunch"}))
    envelope = await google.call("tasks_create", taskListId="@default", title="Call Bo", notes="re: lunch")
    assert envelope == OkEnvelope(data={"id": "t2", "title": "Call Bo", "notes": "re: lunch"})
    assert google.sent == [Sent("POST", TASKS, LIST, {}, {"title": "Call Bo", "notes": "re: lunch"})]


async def test_tasks_update_patches_the_fields_given(google: FakeGoogle) -> None:
    google.respond(reply(body={"id": "t1", "title": "Pay rent today"}))
    envelope = await google.call("tasks_update", taskListId="@default", taskId="t1", title="Pay rent today")
    assert envelope == OkEnvelope(data={"id": "t1", "title": "Pay rent today"})
    assert google.sent == [Sent("PATCH", TASKS, f"{LIST}/t1", {}, {"title": "Pay rent today"})]
    empty = await google.call("tasks_update", call_id="c2", taskListId="@default", taskId="t1")
    assert isinstance(empty, ErrorEnvelope)
    assert empty.error.code == "INVALID_ARGS"


async def test_tasks_complete_sets_the_status(google: FakeGoogle) -> None:
    google.respond(reply(body={"id": "t1", "status": "completed"}))
    envelope = await google.call("tasks_complete", taskListId="@default", taskId="t1")
    assert envelope == OkEnvelope(data={"id": "t1", "status": "completed"})
    assert google.sent == [Sent("PATCH", TASKS, f"{LIST}/t1", {}, {"status": "completed"})]


async def test_tasks_delete_asks_first_then_deletes(google: FakeGoogle) -> None:
    assert isinstance(await google.call("tasks_delete", taskListId="@default", taskId="t1"), NeedsEnvelope)
    google.respond(({"status": "204"}, ""))
    done = await google.call("tasks_delete", call_id="c2", taskListId="@default", taskId="t1", confirmed=True)
    assert done == OkEnvelope(data={"id": "t1", "deleted": True})
    assert google.sent == [Sent("DELETE", TASKS, f"{LIST}/t1", {}, None)]
