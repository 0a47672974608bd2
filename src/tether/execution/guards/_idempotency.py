"""Guard 8: a call runs at most once (seed 002's idempotency and 409 on duplicates and races).

The key is the tool's declared `idempotency_fields` (per principal) or else the call itself: its session,
id, tool and arguments. Read-only tools (`side_effects="none"`) without declared fields are not keyed:
reading again is harmless, and a replayed read could be stale. A repeat of a completed call is answered with the recorded envelope (`Replay`); a
duplicate of a call still running gets `CONFLICT`; so does a *mutating* call whose earlier attempt is in
doubt (an intent without a result, e.g. after a crash) until someone resolves it in the journal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from tether.execution._decisions import Allow, Decision, Replay, refusal
from tether.execution._policy import Policy
from tether.execution.guards._base import Attempt
from tether.store._entries import Lookup
from tether.store._journal import writer_alive
from tether.tools import Tool
from tether.types import ErrorCode, ErrorEnvelope, NeedsEnvelope, OkEnvelope, ToolCall, ToolSpec

__all__ = ["IdempotencyGuard", "envelope_from_json", "idempotency_key"]


def envelope_from_json(data: dict[str, Any]) -> OkEnvelope | NeedsEnvelope | ErrorEnvelope:
    """The envelope recorded as `data` (an envelope's JSON)."""
    if data.get("ok") is True:
        return OkEnvelope.model_validate(data)
    if data.get("needs") is not None:
        return NeedsEnvelope.model_validate(data)
    return ErrorEnvelope.model_validate(data)


def idempotency_key(call: ToolCall, spec: ToolSpec, *, principal: str | None, scope: str) -> str:
    """The key that identifies repeats of `call`; `scope` is the session (or run) id."""
    if spec.idempotency_fields:
        values = {f: call.arguments.get(f) for f in spec.idempotency_fields}
        basis: list[Any] = ["fields", spec.name, principal, values]
    else:
        basis = ["call", scope, call.id, spec.name, call.arguments]
    text = json.dumps(basis, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class IdempotencyGuard:
    """Claims the call's key, first in `in_flight` (this process) and then in the journal (atomically, for
    every process sharing it, writing the call's intent); the executor releases `in_flight` afterwards."""

    def __init__(self, claim: Callable[[Attempt], Awaitable[Lookup]], in_flight: set[str]):
        self._claim = claim
        self._in_flight = in_flight

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        """Read-only tools without declared fields are never keyed (see the module's docstring)."""
        if tool is None or not policy.idempotency:
            return False
        return tool.spec.side_effects != "none" or bool(tool.spec.idempotency_fields)

    async def check(self, attempt: Attempt) -> Decision:
        tool, key = attempt.tool, attempt.idempotency_key
        assert tool is not None, "the unknown-tool guard runs first"
        if not attempt.policy.idempotency or key is None:
            return Allow()
        if key in self._in_flight:
            return _conflict(tool.name, "the same call is already running")
        self._in_flight.add(key)
        try:
            found = await self._claim(attempt)
        except BaseException:
            self._in_flight.discard(key)
            raise
        if attempt.intent is not None:
            return Allow()
        self._in_flight.discard(key)
        if found.status == "done" and found.envelope is not None:
            return Replay(envelope_from_json(found.envelope))
        intent = found.intent
        if intent is not None and writer_alive(intent):
            return _conflict(tool.name, f"the same call is running in process {intent.pid}")
        intent_id = intent.id if intent else None
        return refusal(
            ErrorCode.CONFLICT,
            f"An earlier attempt of this {tool.name} call (journal entry {intent_id}) started but never "
            "finished, so it may or may not have taken effect; it will not be repeated automatically.",
            recoverable=False,
            suggestion=(
                "Do not retry. Tell the user this action may or may not have happened and needs "
                f"checking; an operator can resolve journal entry {intent_id} (`tether audit resolve`)."
            ),
            details={"in_doubt": True, "intent_id": intent_id},
        )


def _conflict(tool: str, reason: str) -> Decision:
    return refusal(
        ErrorCode.CONFLICT,
        f"Duplicate call to {tool}: {reason}.",
        recoverable=True,
        suggestion="Do not send the same call twice; wait for the first one's result.",
        details={"duplicate": True},
    )
