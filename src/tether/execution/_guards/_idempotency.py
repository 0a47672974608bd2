"""Guard 8: a call runs at most once (seed 002's idempotency and 409 on duplicates and races).

The key is the tool's declared `idempotency_fields` (per principal) or else the call itself: its session,
id, tool and arguments. Read-only tools (`side_effects="none"`) without declared fields are not keyed:
reading again is harmless, and a replayed read could be stale. A repeat of a call that succeeded is
answered with the recorded envelope (`Replay`), as is a mutating call that timed out or failed part way (it
may have taken effect); a call answered with `needs` or the tool's own error runs again. A call that shares
only its declared fields with one that succeeded gets `CONFLICT`, not that call's result; so does a
duplicate of a call still running, and a *mutating* call whose earlier attempt is in doubt (an intent
without a result, e.g. after a crash) until someone resolves it in the journal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from tether import envelopes
from tether.execution._decisions import Allow, Decision, Replay, refusal
from tether.execution._guards._base import Attempt
from tether.execution._policy import Policy
from tether.store import Lookup
from tether.store.internal import replays, writer_alive
from tether.tools import Tool
from tether.types import ErrorCode, ToolCall, ToolSpec

__all__ = ["IdempotencyGuard", "idempotency_key"]


def idempotency_key(call: ToolCall, spec: ToolSpec, *, principal: str | None, scope: str) -> str:
    """The key that identifies repeats of `call`; `scope` is the session (or run) id."""
    if spec.idempotency_fields:
        values = {f: call.arguments.get(f) for f in spec.idempotency_fields}
        basis: list[Any] = ["fields", spec.name, principal, values]
    else:
        basis = ["call", scope, call.id, spec.name, call.arguments]
    text = _CANONICAL.encode(basis)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=repr)
"""`json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)`, without making an encoder a call
(keys written before must stay the same: the journal matches repeats by them)."""


class IdempotencyGuard:
    """Claims the call's key, first in `in_flight` (this process) and then in the journal (atomically, for
    every process sharing it, writing the call's intent); the executor releases `in_flight` afterwards."""

    def __init__(
        self,
        claim: Callable[[Attempt], Awaitable[Lookup]],
        lookup: Callable[[str], Awaitable[Lookup]],
        in_flight: set[str],
    ):
        self._claim = claim
        self._lookup = lookup
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
        if key in self._in_flight:  # a repeat of a completed call is answered even while another is claiming
            found = await self._lookup(key)
            if found.status == "done" and replays(found.envelope, tool.spec.side_effects):
                return _replay(attempt, found)
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
        if found.status == "done":  # the claim did not go through: its result answers repeats
            return _replay(attempt, found)
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


def _replay(attempt: Attempt, found: Lookup) -> Decision:
    """The recorded result, for a repeat with the same arguments; `CONFLICT` for a call that shares only
    its declared `idempotency_fields` with the one that ran."""
    assert found.envelope is not None
    assert found.intent is not None
    assert attempt.tool is not None
    recorded = {k: v for k, v in (found.intent.arguments or {}).items() if k != "why"}
    given = {k: v for k, v in attempt.arguments().items() if k != "why"}
    if recorded == given:
        return Replay(envelopes.from_json(found.envelope))
    spec = attempt.tool.spec
    fields = ", ".join(f"`{f}`" for f in spec.idempotency_fields)
    changed = sorted(k for k in recorded.keys() | given.keys() if recorded.get(k) != given.get(k))
    return refusal(
        ErrorCode.CONFLICT,
        f"A {spec.name} call with the same {fields} already completed, with other arguments "
        f"({', '.join(f'`{k}`' for k in changed)} differ); it is not run again.",
        recoverable=False,
        suggestion=(
            f"Do not retry. The earlier call stands; to change it, tell the user, or use a new {fields}."
        ),
        details={"duplicate": True, "intent_id": found.intent.id, "differing": changed},
    )


def _conflict(tool: str, reason: str) -> Decision:
    return refusal(
        ErrorCode.CONFLICT,
        f"Duplicate call to {tool}: {reason}.",
        recoverable=True,
        suggestion="Do not send the same call twice; wait for the first one's result.",
        details={"duplicate": True},
    )
