"""`Journal`: the append-only record of every call, and `MemoryJournal`, the one that keeps it in memory."""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from tether.store._entries import JournalEntry, Lookup
from tether.store._storable import storable, storable_text

__all__ = ["Journal", "MemoryJournal", "completed", "may_run", "replays", "resolution", "writer_alive"]


class Journal(Protocol):
    """Where the executor records intents before and results after every call.

    Methods are synchronous; a journal that does I/O sets `blocking = True` and the executor calls it from a
    worker thread. One that can often write without waiting may also set `inline = True` and accept
    `wait=False` on `append` and `claim`, raising `WouldWait` (having written nothing) when it would have to
    wait: the executor then tries those writes on its own thread first (see `SqlJournal`). One that keeps
    entries as objects and does not block may offer `complete(intent, make, arguments)`, taking a call's
    result entry to make only when read (see `MemoryJournal.complete`).
    """

    blocking: bool

    def append(self, entry: JournalEntry) -> JournalEntry:
        """Store `entry` durably, set its `id` and return it."""
        ...

    def lookup(self, idempotency_key: str) -> Lookup:
        """What happened to the latest call with this key."""
        ...

    def claim(self, intent: JournalEntry) -> Lookup:
        """Atomically (across processes sharing the journal) look up the intent's idempotency key and, if
        the call may run (`may_run`), append the intent. Returns the lookup as it was; the claim succeeded
        iff `intent.id` is set.
        """
        ...

    def in_doubt(self) -> list[JournalEntry]:
        """Intents with neither a result nor a resolution, oldest first."""
        ...

    def entries(
        self, *, limit: int | None = None, call_id: str | None = None, since_id: int | None = None
    ) -> list[JournalEntry]:
        """Entries in the order they were appended (the last `limit` of them when given)."""
        ...

    def entry(self, entry_id: int) -> JournalEntry | None:
        """The entry with this id, if any."""
        ...


class MemoryJournal:
    """A journal in memory: idempotency within one process, nothing kept across restarts.

    Args:
        max_entries: How many entries to keep; the oldest are forgotten beyond it (and with them the
            idempotency of calls that old), so that a long-running process does not grow without bound.
    """

    blocking = False

    def __init__(self, *, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._entries: deque[JournalEntry | _Later] = deque()
        self._next_id = 1
        self._latest_intent: dict[str, JournalEntry] = {}
        """The latest intent of each idempotency key, for `lookup`."""
        self._completion: dict[int, JournalEntry | _Later] = {}
        """The result or resolution of each keyed intent, for `lookup` (only keyed ones are looked up)."""
        self._open: dict[int, JournalEntry] = {}
        """Intents with neither a result nor a resolution yet, oldest first (`in_doubt`): the calls running,
        and those a crash left. Small and touched by every call, where an index of every completion would
        be as large as the journal (a cache miss or two an entry, most of what an append cost)."""
        self._lock = threading.RLock()

    def append(self, entry: JournalEntry) -> JournalEntry:
        with self._lock:
            entry.id = self._next_id
            self._next_id += 1
            entries = self._entries
            entries.append(entry)
            kind = entry.kind
            if kind == "intent":
                self._open[entry.id] = entry
                if entry.idempotency_key is not None:
                    self._latest_intent[entry.idempotency_key] = entry
            elif (kind == "result" or kind == "resolution") and entry.intent_id is not None:
                opened = self._open.pop(entry.intent_id, None)
                if entry.idempotency_key is not None or (opened is not None and opened.idempotency_key):
                    self._completion[entry.intent_id] = entry
            if len(entries) > self.max_entries:
                self._trim()
            return entry

    def complete(
        self, intent: JournalEntry, make: Callable[..., JournalEntry], arguments: tuple[Any, ...]
    ) -> int:
        """Append the entry `make(*arguments)` that completes `intent` (its result, which keeps its columns),
        built only when read: returns its id.

        For the executor, which writes a result entry after every call and never reads it back itself:
        most are never read (a memory journal goes with the process), and making one costs as much as
        writing it (~0.5 µs). What is read is the same entry `append(make(*arguments))` would have kept (the
        same values: `arguments` holds what changes, e.g. the time), made once, on the first read, and the
        same object on every read after (`tests/store/test_journal.py`)."""
        with self._lock:
            entry_id = self._next_id
            self._next_id = entry_id + 1
            later: _Later = (make, arguments, entry_id)
            entries = self._entries
            entries.append(later)
            assert intent.id is not None, "an intent the journal holds"
            self._open.pop(intent.id, None)
            if intent.idempotency_key is not None:  # the entry's own key: its intent's
                self._completion[intent.id] = later
            if len(entries) > self.max_entries:
                self._trim()
            return entry_id

    def _trim(self) -> None:
        """Forget the oldest entries beyond `max_entries`."""
        entries = self._entries
        while len(entries) > self.max_entries:
            old = entries.popleft()
            if not isinstance(old, tuple) and old.kind == "intent":  # an entry made later never is one
                self._forget(old)

    def _made(self, item: JournalEntry | _Later, index: int | None = None) -> JournalEntry:
        """The entry `item` is (made now, if `complete` left it to make), kept in its place from now on:
        at `index` in the entries when known, else found there. Called with the lock held."""
        if not isinstance(item, tuple):
            return item
        entry = self._make(item)
        entries = self._entries
        if index is None:
            index = item[2] - _id_of(entries[0]) if entries else -1
        if 0 <= index < len(entries) and entries[index] is item:
            entries[index] = entry
        return entry

    def _make(self, item: _Later) -> JournalEntry:
        """Make an entry `complete` left to make, and index it in its place (the entries are the caller's)."""
        make, arguments, entry_id = item
        entry = make(*arguments)
        entry.id = entry_id
        if entry.intent_id is not None and self._completion.get(entry.intent_id) is item:
            self._completion[entry.intent_id] = entry
        return entry

    def _forget(self, old: JournalEntry) -> None:
        """Drop an intent the journal no longer keeps from its indexes."""
        self._open.pop(old.id or 0, None)
        key = old.idempotency_key
        if key is not None:
            self._completion.pop(old.id or 0, None)
            if self._latest_intent.get(key) is old:
                del self._latest_intent[key]

    def lookup(self, idempotency_key: str) -> Lookup:
        intent = self._latest_intent.get(idempotency_key)
        if intent is None:
            return _NEW
        assert intent.id is not None
        completion = self._completion.get(intent.id)
        if isinstance(completion, tuple):  # to make: under the lock, where another thread may have made it
            with self._lock:
                completion = self._completion.get(intent.id)
                if isinstance(completion, tuple):
                    completion = self._made(completion)
        return completed(intent, completion)

    def claim(self, intent: JournalEntry) -> Lookup:
        key = intent.idempotency_key
        assert key is not None
        with self._lock:
            if key not in self._latest_intent:  # the usual claim, of a key never seen: `lookup`'s `new`
                self.append(intent)
                return _NEW
            found = self.lookup(key)
            if may_run(found, intent):
                self.append(intent)
            return found

    def in_doubt(self) -> list[JournalEntry]:
        with self._lock:
            return list(self._open.values())

    def entries(
        self, *, limit: int | None = None, call_id: str | None = None, since_id: int | None = None
    ) -> list[JournalEntry]:
        with self._lock:
            kept = list(self._entries)
            found = [self._make(e) if isinstance(e, tuple) else e for e in kept]
            if any(isinstance(e, tuple) for e in kept):  # kept made from now on: one pass, not a write each
                self._entries = deque(found)
        if since_id is not None:
            found = [e for e in found if (e.id or 0) > since_id]
        if call_id is not None:
            found = [e for e in found if e.call_id == call_id]
        return found[-limit:] if limit else found

    def entry(self, entry_id: int) -> JournalEntry | None:
        with self._lock:
            if not self._entries:
                return None
            index = entry_id - _id_of(self._entries[0])
            return self._made(self._entries[index], index) if 0 <= index < len(self._entries) else None


_Later = tuple[Callable[..., JournalEntry], tuple[Any, ...], int]
"""An entry `MemoryJournal.complete` left to make: how (`make(*arguments)`), and its id."""


def _id_of(item: JournalEntry | _Later) -> int:
    return item[2] if isinstance(item, tuple) else (item.id or 0)


_NEW = Lookup("new")
"""What `lookup` finds for a key never seen, made once (a frozen dataclass costs ~1 µs to make)."""


def completed(intent: JournalEntry, completion: JournalEntry | None) -> Lookup:
    """The lookup answer for an intent and the result or resolution that completed it, if any."""
    if completion is None:
        return Lookup("in_doubt", intent)
    envelope: dict[str, Any] | None = completion.envelope
    if completion.kind == "resolution" and envelope is None:
        return Lookup("new", intent)
    return Lookup("done", intent, envelope)


def resolution(intent: JournalEntry, *, envelope: dict[str, Any] | None, note: str) -> JournalEntry:
    """The entry that settles an intent in doubt: `envelope=None` means it did not take effect (it may run
    again); otherwise `envelope` (an envelope's JSON) is what repeats of the call get."""
    outcome, code = None, None
    if envelope is not None:
        stored: dict[str, Any] = storable(envelope)  # an operator's JSON may hold NaN, which no journal can
        envelope = stored
        outcome = "ok" if stored.get("ok") is True else "needs" if stored.get("needs") else "error"
        error: Any = stored.get("error")
        code = str(error.get("code")) if isinstance(error, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return dataclasses.replace(
        intent,
        kind="resolution",
        id=None,
        intent_id=intent.id,
        created_at=time.time(),
        envelope=envelope,
        outcome=outcome,
        error_code=code,
        duration_ms=None,
        traceback=None,
        note=storable_text(note),
        pid=os.getpid(),
        host=socket.gethostname(),
    )


def may_run(found: Lookup, intent: JournalEntry) -> bool:
    """Whether a call with this lookup may run: it never ran; or it is in doubt and safe to repeat; or it
    completed with a result that does not answer repeats (see `replays`)."""
    if found.status == "done":
        return not replays(found.envelope, intent.side_effects)
    return found.status == "new" or (found.status == "in_doubt" and intent.side_effects != "mutating")


def replays(envelope: dict[str, Any] | None, side_effects: str | None) -> bool:
    """Whether a recorded result answers repeats of its call instead of running it again: a success; or a
    mutating call stopped (`TIMEOUT`) or failed (`INTERNAL`) part way, which may have taken effect.

    Anything else ran to a decision that a repeat should hear afresh: `needs` (ask, then proceed with the
    answer) or the tool's own error (the user may have fixed its cause since).
    """
    if envelope is None:
        return False
    if envelope.get("ok") is True:
        return True
    error: Any = envelope.get("error")
    code = error.get("code") if isinstance(error, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return side_effects == "mutating" and code in ("TIMEOUT", "INTERNAL")


def writer_alive(entry: JournalEntry) -> bool:
    """Whether the process that wrote `entry` is still running on this host (then its intent is not in
    doubt but in progress). Unknown hosts count as not alive."""
    if entry.pid is None or entry.host != socket.gethostname():
        return False
    try:
        os.kill(entry.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
