"""Google's HTTP errors reach the model as envelopes it can act on (seed 002's codes)."""

import pytest

from tether.execution import Executor, Principal, Run
from tether.types import ErrorEnvelope, ErrorInfo, ToolCall

from .conftest import FakeGoogle, google_error

pytestmark = pytest.mark.anyio


async def test_401_is_unauthorized_with_a_needs_to_reauthorise(google: FakeGoogle) -> None:
    google.respond(({"status": "401"}, google_error(401, "Invalid Credentials", "authError")))
    envelope = await google.call("gmail_read", messageId="m1")
    assert envelope == ErrorEnvelope(
        error=ErrorInfo(
            code="UNAUTHORIZED",
            message="Google refused the saved sign-in: Invalid Credentials",
            recoverable=False,
            suggestion="Do not retry. Ask the user to reconnect their Google account, then try again.",
            details={
                "needs": {"google_reauth": "Please reconnect your Google account so I can continue."},
                "reauth": {
                    "provider": "google",
                    "scopes": ["gmail.readonly"],
                    "command": "tether auth google --scope gmail.readonly",
                },
            },
        )
    )


async def test_403_for_a_missing_scope_is_scopes_missing_naming_the_command(google: FakeGoogle) -> None:
    google.respond(
        (
            {"status": "403"},
            google_error(403, "Request had insufficient authentication scopes.", "insufficientPermissions"),
        )
    )
    envelope = await google.call("calendar_list")
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.recoverable) == ("SCOPES_MISSING", False)
    assert (
        envelope.error.suggestion
        == "Do not retry. Ask the user to grant it: tether auth google --scope calendar.readonly"
    )
    assert envelope.error.details == {"missing_scopes": ["calendar.readonly"]}


async def test_403_otherwise_is_permission_denied(google: FakeGoogle) -> None:
    google.respond(({"status": "403"}, google_error(403, "The caller does not have permission", "forbidden")))
    envelope = await google.call("docs_read", documentId="d1")
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.message) == (
        "PERMISSION_DENIED",
        "Google denied access: The caller does not have permission",
    )


async def test_404_is_not_found(google: FakeGoogle) -> None:
    google.respond(({"status": "404"}, google_error(404, "Requested entity was not found.", "notFound")))
    envelope = await google.call("tasks_get", taskListId="@default", taskId="nope")
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.recoverable) == ("NOT_FOUND", True)


@pytest.mark.parametrize(
    ("status", "headers", "reason", "wait"),
    [
        (429, {"retry-after": "7"}, "rateLimitExceeded", 7.0),
        (503, {}, "backendError", 1.0),
        (403, {"retry-after": "3"}, "userRateLimitExceeded", 3.0),  # Google's per-user quota answers 403
    ],
)
async def test_rate_limits_and_server_errors_are_recoverable_and_honour_retry_after(
    google: FakeGoogle, status: int, headers: dict[str, str], reason: str, wait: float
) -> None:
    google.respond(({"status": str(status), **headers}, google_error(status, "Slow down", reason)))
    envelope = await google.call("drive_list")
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.recoverable) == ("RATE_LIMITED", True)
    assert envelope.error.details == {"retry_after_s": wait, "status": status}
    assert envelope.error.suggestion == f"Wait {wait:g} seconds, then retry the same call."


async def test_a_principal_without_the_granted_scope_is_refused_before_google_is_asked(
    google: FakeGoogle,
) -> None:
    from tether.packs.google import principal_scopes

    reader = Principal(id="ana", scopes=principal_scopes(["https://www.googleapis.com/auth/gmail.readonly"]))
    run = Run(principal=reader)
    call = ToolCall(id="c1", name="gmail_send", arguments={"to": "a@b.c", "subject": "s", "body": "b"})
    envelope = await google.executor.execute(call, run)
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "SCOPES_MISSING"
    assert envelope.error.details == {"missing_scopes": ["google:gmail.send"]}
    assert google.sent == []


def test_broader_google_scopes_imply_the_narrower_ones() -> None:
    from tether.packs.google import principal_scopes

    assert principal_scopes(["https://www.googleapis.com/auth/drive", "calendar"]) == {
        "google:drive", "google:drive.readonly", "google:drive.file", "google:calendar",
        "google:calendar.readonly", "google:calendar.events", "google:calendar.events.readonly",
    }  # fmt: skip
    assert principal_scopes(["gmail.readonly"]) == {"google:gmail.readonly"}


async def test_without_a_sign_in_every_tool_answers_unauthorized_with_the_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    pytest.importorskip("googleapiclient", reason="the google extra is not installed")
    from tether.packs.google import google_pack

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    executor = Executor(google_pack())
    run = Run(principal=Principal(id="ana", scopes=frozenset({"google:tasks.readonly"})))
    envelope = await executor.execute(ToolCall(id="c1", name="tasks_list", arguments={}), run)
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "UNAUTHORIZED"
    assert envelope.error.message == "No Google account is connected (run `tether auth google`)."


async def test_an_unreachable_google_is_connection_inactive_and_recoverable() -> None:
    pytest.importorskip("googleapiclient", reason="the google extra is not installed")
    from tether.packs.google import google_pack

    class Down:  # an httplib2-like transport whose every request fails to connect
        def request(self, *args: object, **kwargs: object) -> object:
            raise ConnectionRefusedError(111, "Connection refused")

    executor = Executor(google_pack(http=Down()))
    run = Run(principal=Principal(id="ana", scopes=frozenset({"google:tasks.readonly"})))
    envelope = await executor.execute(ToolCall(id="c1", name="tasks_list", arguments={}), run)
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.recoverable) == ("CONNECTION_INACTIVE", True)
