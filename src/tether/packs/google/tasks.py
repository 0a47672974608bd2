"""Tasks: tasks_list, tasks_get, tasks_create, tasks_update, tasks_complete, tasks_delete."""

from __future__ import annotations

from typing import Any

from tether.packs.google._errors import GoogleFailure, error_envelope
from tether.packs.google._kit import Kit, page_size
from tether.tools import Tool
from tether.types import ErrorCode

__all__ = ["tasks_tools"]

_WRITE = ("tasks",)
_TASK_KEYS = ("id", "title", "notes", "status", "due", "completed", "parent", "webViewLink")


def tasks_tools(kit: Kit) -> list[Tool[..., Any]]:
    def tasks() -> Any:
        return kit.api.resource("tasks", "v1", "tasks")

    @kit.tool("tasks_list", ("tasks.readonly",), "none")
    def tasks_list(
        taskListId: str = "@default",
        showCompleted: bool = False,
        maxResults: int = 50,
        pageToken: str | None = None,
    ) -> dict[str, Any]:
        """List the tasks of a task list (open ones unless asked otherwise).

        Args:
            taskListId: The list (`@default` is the user's default list).
            showCompleted: Include completed tasks.
            maxResults: How many (1-100).
            pageToken: The `nextPageToken` of the previous page.
        """
        params: dict[str, Any] = {
            "tasklist": taskListId,
            "showCompleted": showCompleted,
            "maxResults": page_size(maxResults),
        }
        if pageToken:
            params["pageToken"] = pageToken
        found = tasks().list(**params).execute()
        out: dict[str, Any] = {"tasks": [_task(t) for t in found.get("items", [])]}
        if found.get("nextPageToken"):
            out["nextPageToken"] = found["nextPageToken"]
        return out

    @kit.tool("tasks_get", ("tasks.readonly",), "none")
    def tasks_get(taskListId: str, taskId: str) -> dict[str, Any]:
        """Get one task.

        Args:
            taskListId: The list (`@default` is the user's default list).
            taskId: The task's id.
        """
        return _task(tasks().get(tasklist=taskListId, task=taskId).execute())

    @kit.tool("tasks_create", _WRITE, "mutating")
    def tasks_create(
        taskListId: str, title: str, notes: str | None = None, due: str | None = None
    ) -> dict[str, Any]:
        """Add a task.

        Args:
            taskListId: The list (`@default` is the user's default list).
            title: What to do.
            notes: Details.
            due: The due date, RFC 3339 (Google keeps only the date).
        """
        body: dict[str, Any] = {"title": title}
        if notes:
            body["notes"] = notes
        if due:
            body["due"] = due
        return _task(tasks().insert(tasklist=taskListId, body=body).execute())

    @kit.tool("tasks_update", _WRITE, "idempotent")
    def tasks_update(
        taskListId: str,
        taskId: str,
        title: str | None = None,
        notes: str | None = None,
        due: str | None = None,
    ) -> dict[str, Any]:
        """Change a task: only the fields given change.

        Args:
            taskListId: The list.
            taskId: The task's id.
            title: A new title.
            notes: New details.
            due: A new due date, RFC 3339.
        """
        patch = {k: v for k, v in {"title": title, "notes": notes, "due": due}.items() if v is not None}
        if not patch:
            raise GoogleFailure(
                error_envelope(
                    ErrorCode.INVALID_ARGS,
                    "tasks_update needs at least one field to change (title, notes, due).",
                    recoverable=True,
                    suggestion="Call again with the fields to change, or tasks_complete to tick it off.",
                )
            )
        return _task(tasks().patch(tasklist=taskListId, task=taskId, body=patch).execute())

    @kit.tool("tasks_complete", _WRITE, "idempotent")
    def tasks_complete(taskListId: str, taskId: str) -> dict[str, Any]:
        """Mark a task done.

        Args:
            taskListId: The list.
            taskId: The task's id.
        """
        done = tasks().patch(tasklist=taskListId, task=taskId, body={"status": "completed"}).execute()
        return _task(done)

    @kit.tool("tasks_delete", _WRITE, "mutating")
    def tasks_delete(taskListId: str, taskId: str, confirmed: bool = False) -> dict[str, Any]:
        """Delete a task.

        Args:
            taskListId: The list.
            taskId: The task's id.
            confirmed: The user has approved deleting this task.
        """
        kit.confirm_first("tasks_delete", confirmed, f"Delete the task {taskId}?")
        tasks().delete(tasklist=taskListId, task=taskId).execute()
        return {"id": taskId, "deleted": True}

    return [tasks_list, tasks_get, tasks_create, tasks_update, tasks_complete, tasks_delete]


def _task(task: dict[str, Any]) -> dict[str, Any]:
    return {k: task[k] for k in _TASK_KEYS if k in task}
