"""Guard 8: a call runs at most once (seed 002's idempotency and 409 on duplicates and races).

The key is the tool's declared `idempotency_fields` (per principal) or else the call itself: its session,
id, tool and arguments. Read-only tools (`side_effects="none"`) without declared fields are not keyed:
reading again is harmless, and a replayed read could be stale. A repeat of a call that succeeded is
answered with the recorded envelope (`Replay`), as is a mutating call that timed out or failed part way (it
may have taken effect); a call answered with `needs` or the tool's own error runs again. A call that shares
only its declared fields with one that succeeded gets `CONFLICT`, not that call's result; so does a
duplicate of a call still running, and a *mutating* call whose earlier attempt is in doubt (an intent
without a result, e.g. after a crash) until someone resolves it in the journal.

Running or in doubt: an intent without a result is a call still running if this process wrote it and a
call of it holds its key (`running_here`: from before its claim until its result is written, in any of its
executors), or if another process on this host wrote it and is alive. Otherwise it is in doubt: written on
another host (never known alive), by a process that died, or by a call of this process that let go of its
key without a result (its result write failed at its commit, or it was stopped part way); the same answer
here as in any other process and after a crash.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import json.encoder
import os
import socket
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from tether import envelopes
from tether.execution._decisions import Allow, Decision, Replay, refusal
from tether.execution._guards._base import Attempt
from tether.execution._policy import Policy
from tether.store import JournalEntry, Lookup
from tether.store.internal import replays, writer_alive
from tether.tools import Tool
from tether.types import ErrorCode, ToolCall, ToolSpec

__all__ = ["IdempotencyGuard", "idempotency_key", "running_here"]


def idempotency_key(call: ToolCall, spec: ToolSpec, *, principal: str | None, scope: str) -> str:
    """The key that identifies repeats of `call`; `scope` is the session (or run) id."""
    if spec.idempotency_fields:
        values = {f: call.arguments.get(f) for f in spec.idempotency_fields}
        text = _canonical(["fields", spec.name, principal, values])
    else:
        call_id, name = call.id, spec.name
        if type(scope) is str and type(call_id) is str and type(name) is str:
            # `_canonical(["call", scope, call_id, name, call.arguments])` as the encoder writes it: its list
            # of strings costs as much again as the arguments (~0.3 µs, on every call of a keyed tool)
            head = f'["call",{_quoted(scope)},{_quoted(call_id)},{_quoted(name)},'
            text = head + _canonical(call.arguments) + "]"
        else:
            text = _canonical(["call", scope, call_id, name, call.arguments])
    return _sha256(text.encode()).hexdigest()[:32]


def _canonical_json() -> Callable[[Any], str]:
    """`json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)`: the text keys written before
    were hashed from, which must stay the same (the journal matches repeats by them). `json.dumps` makes a C
    encoder on every call (~1 µs of a key's ~2.7); this one is made once. It keeps no state between calls
    (no table of containers being written, so threads may share it): a circular value, which the schema
    guard refuses before any key is made, would end in `RecursionError` rather than `ValueError`."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without `_json`: the pure-Python encoder, made once too
        return json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=repr).encode
    encode = make(None, repr, json.encoder.encode_basestring_ascii, None, ":", ",", True, False, True)
    return lambda value: "".join(encode(value, 0))


_canonical = _canonical_json()
_quoted: Callable[[str], str] = json.encoder.encode_basestring_ascii
"""A string as `_canonical` writes it (the encoder's own function: C where there is `_json`)."""


def _builtin_sha256() -> Callable[[bytes], Any]:
    """SHA-256 as CPython builds it in, where it does: for a key's few dozen bytes, OpenSSL's context set up
    and copied for the hex digest cost more than the hashing (~0.15 µs a key); the same digest."""
    for module in ("_sha256", "_sha2"):  # 3.11's name, 3.12's
        with contextlib.suppress(ImportError):
            return importlib.import_module(module).sha256
    return hashlib.sha256  # an interpreter built without them


_sha256 = _builtin_sha256()


class IdempotencyGuard:
    """Claims the call's key, first in `in_flight` (this process) and then in the journal (atomically, for
    every process sharing it, writing the call's intent); the executor releases `in_flight` afterwards.

    `claim_now` and `lookup_now`, when given, do the same as `claim` and `lookup` without waiting (a journal
    in memory): the executor then decides through `check_now`, with no coroutine a call. `claim_now` returns
    None when the write has to wait after all (e.g. a rate-limit token to take with it): `check` does it.
    """

    def __init__(
        self,
        claim: Callable[[Attempt], Awaitable[Lookup]],
        lookup: Callable[[str], Awaitable[Lookup]],
        in_flight: set[str],
        *,
        claim_now: Callable[[Attempt], Lookup | None] | None = None,
        lookup_now: Callable[[str], Lookup] | None = None,
    ):
        self._claim = claim
        self._lookup = lookup
        self._in_flight = in_flight
        self._claim_now = claim_now
        self._lookup_now = lookup_now
        _GUARDS.add(self)  # `running_here` asks every executor's guard

    def holds(self, key: str) -> bool:
        """Whether a call of this guard's executor holds `key` (see `running_here`)."""
        return key in self._in_flight

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        """Read-only tools without declared fields are never keyed (see the module's docstring)."""
        if tool is None or not policy.idempotency:
            return False
        return tool.spec.side_effects != "none" or bool(tool.spec.idempotency_fields)

    def check_now(self, attempt: Attempt) -> Decision | None:
        """The decision without waiting when the journal answers at once; None to await `check`."""
        claim_now, lookup_now = self._claim_now, self._lookup_now
        if claim_now is None or lookup_now is None:
            return None
        key = attempt.idempotency_key
        if not attempt.policy.idempotency or key is None:
            return _ALLOW
        if key in self._in_flight:
            return _running(attempt, lookup_now(key))
        self._in_flight.add(key)
        try:
            found = claim_now(attempt)
        except BaseException:
            self._in_flight.discard(key)
            raise
        if found is None:  # it has to wait: `check` claims it
            self._in_flight.discard(key)
            return None
        decision = self._claimed(attempt, key, found)
        if decision is None:
            decision = _looked_again(attempt, found, lookup_now(key))
        return decision

    async def check(self, attempt: Attempt) -> Decision:
        key = attempt.idempotency_key
        assert attempt.tool is not None, "the unknown-tool guard runs first"
        if not attempt.policy.idempotency or key is None:
            return _ALLOW
        if key in self._in_flight:  # a repeat of a completed call is answered even while another is claiming
            return _running(attempt, await self._lookup(key))
        self._in_flight.add(key)
        try:
            found = await self._claim(attempt)
        except BaseException:
            self._in_flight.discard(key)
            raise
        decision = self._claimed(attempt, key, found)
        if decision is None:
            decision = _looked_again(attempt, found, await self._lookup(key))
        return decision

    def _claimed(self, attempt: Attempt, key: str, found: Lookup) -> Decision | None:
        """The decision once the claim is made: it went through (the intent is written) or `found` says why
        not; None for an intent in doubt that this process wrote and no call of it holds (`running_here`),
        which may have just got its result: the caller looks again (`_looked_again`)."""
        if attempt.intent is not None:
            return _ALLOW
        self._in_flight.discard(key)
        tool = attempt.tool
        assert tool is not None, "the unknown-tool guard runs first"
        if found.status == "done":  # the claim did not go through: its result answers repeats
            return _replay(attempt, found)
        intent = found.intent
        if intent is not None and intent.pid == os.getpid() and intent.host == socket.gethostname():
            if running_here(key):
                return _conflict(tool.name, f"the same call is running in process {intent.pid}")
            return None
        if intent is not None and writer_alive(intent):
            return _conflict(tool.name, f"the same call is running in process {intent.pid}")
        return _in_doubt(tool.name, intent)


_ALLOW = Allow()


class _Guards:
    """Every executor's idempotency guard in this process, with the keys their calls hold (`running_here`).

    Its lock is held to add a guard (as an executor is made) and to copy the set (on a look): a `WeakSet`
    another thread changes while it is iterated raises. A call that runs never takes it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.guards: weakref.WeakSet[IdempotencyGuard] = weakref.WeakSet()
        os.register_at_fork(after_in_child=self._forked)

    def add(self, guard: IdempotencyGuard) -> None:
        with self.lock:
            self.guards.add(guard)

    def hold(self, key: str) -> bool:
        with self.lock:
            guards = list(self.guards)
        return any(guard.holds(key) for guard in guards)

    def _forked(self) -> None:
        """A forked child's own lock: a thread of its parent may have held this one as it forked."""
        self.lock = threading.Lock()


_GUARDS = _Guards()


def running_here(key: str) -> bool:
    """Whether a call of this process holds `key`, in any executor: claimed (or being claimed), its result
    not yet written. An intent of this process's without a result, whose key no call holds, is in doubt:
    its result write failed, or its call was stopped part way."""
    return _GUARDS.hold(key)


def _looked_again(attempt: Attempt, found: Lookup, again: Lookup) -> Decision:
    """The decision for a call whose key's intent in doubt (`found`) is this process's and held by no call of
    it, from the journal looked at again (`again`): a call holds its key until its result is written, so that
    intent still without a result now is in doubt; one that has it finished meanwhile (as `_running`)."""
    tool = attempt.tool
    assert tool is not None, "the unknown-tool guard runs first"
    intent = found.intent
    assert intent is not None
    if again.status == "in_doubt" and again.intent is not None and again.intent.id == intent.id:
        return _in_doubt(tool.name, intent)
    return _running(attempt, again)


def _in_doubt(name: str, intent: JournalEntry | None) -> Decision:
    """`CONFLICT` for a mutating call whose earlier attempt (`intent`) may or may not have taken effect."""
    intent_id = intent.id if intent else None
    return refusal(
        ErrorCode.CONFLICT,
        f"An earlier attempt of this {name} call (journal entry {intent_id}) started but never "
        "finished, so it may or may not have taken effect; it will not be repeated automatically.",
        recoverable=False,
        suggestion=(
            "Do not retry. Tell the user this action may or may not have happened and needs "
            f"checking; an operator can resolve journal entry {intent_id} (`tether audit resolve`)."
        ),
        details={"in_doubt": True, "intent_id": intent_id},
    )


def _running(attempt: Attempt, found: Lookup) -> Decision:
    """A call whose key another call of this process holds: the recorded result if that one is done and its
    result answers repeats, else `CONFLICT`."""
    tool = attempt.tool
    assert tool is not None, "the unknown-tool guard runs first"
    if found.status == "done" and replays(found.envelope, tool.spec.side_effects):
        return _replay(attempt, found)
    return _conflict(tool.name, "the same call is already running")


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
