"""Running one tool under its timeout and turning whatever happens into exactly one envelope.

Async tools are called and run to their first wait (`start`), and only one that waits is awaited, under a
timer armed then (`finish`; its deadline counts from the call); sync tools run in a worker thread,
except those declared `inline` (functions known never to block), which are called on the event loop;
tools whose sandbox asks for `isolation="process"` run in a child process. On timeout an async tool is
cancelled and an isolated one killed with its process group; a sync tool in a thread cannot be stopped
(Python has no way to), so its thread is abandoned while the model gets `TIMEOUT` — declare
`isolation="process"` for tools that may hang.
Exceptions never escape: tool signals become their envelopes, anything else `INTERNAL` with a message safe
to show a model, the traceback kept for the journal; so do a tool's `SystemExit`, `KeyboardInterrupt` and a
`CancelledError` of its own. Cancellation from outside (the run's) propagates.
"""

from __future__ import annotations

import asyncio
import functools
import time
import traceback
import types
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from typing import Any, NamedTuple, cast

import pydantic_core

from tether import envelopes
from tether._threads import Expired, run_in_worker
from tether.exceptions import NeedsInput, ToolCrashed, ToolError
from tether.execution._plain import plain_scalar
from tether.execution._process import run_in_process
from tether.tools import Tool
from tether.types import AnyEnvelope, ErrorEnvelope, NeedsEnvelope, OkEnvelope

__all__ = ["Deadlines", "ToolResult", "Waiting", "as_json", "finish", "invoke", "returned", "start"]


class ToolResult(NamedTuple):
    """What running a tool came to: its envelope, and for the journal the traceback of a failure (a tuple:
    made on every call, at half the cost of a frozen dataclass)."""

    envelope: AnyEnvelope
    traceback: str | None = None
    """For `INTERNAL` failures: what went wrong, for the journal only."""


async def invoke(
    tool: Tool[..., Any],
    kwargs: dict[str, Any],
    *,
    timeout_s: float | None,
    deadlines: Deadlines | None = None,
) -> ToolResult:
    """Run `tool` with `kwargs`, within `timeout_s` seconds when given; an async tool's timeout through
    `deadlines` when given (and of the running loop), else with a timer of its own."""
    function = tool.function
    if function is None:
        return _internal(tool.name, "it is declared only, with no implementation in this process", None)
    if tool.is_async and tool.spec.sandbox.isolation != "process":
        started = time.perf_counter()
        first = start(tool, kwargs)
        if isinstance(first, Waiting):
            return await finish(tool, first, timeout_s=timeout_s, started=started, deadlines=deadlines)
        return first
    loop = asyncio.get_running_loop()
    deadline = None if timeout_s is None else loop.time() + timeout_s
    timer: asyncio.Timeout | None = None
    isolated = tool.spec.sandbox.isolation == "process"
    try:
        if isolated:
            timer = asyncio.timeout_at(deadline)
            async with timer:
                result = await run_in_process(function, kwargs)
        elif tool.inline:  # declared never to block: called here, without the hop to a worker thread
            result = function(**kwargs)
        else:  # in a worker thread, which its deadline abandons (raising `Expired`)
            result = await run_in_worker(functools.partial(function, **kwargs), deadline=deadline)
    except BaseException as e:
        if isinstance(e, Expired) or (isinstance(e, TimeoutError) and timer is not None and timer.expired()):
            return _timed_out(tool, timeout_s, stopped=isolated)
        return _raised(tool, e)
    return returned(tool, result)


_ok = cast("Callable[[type[ToolResult], tuple[AnyEnvelope, None]], ToolResult]", tuple.__new__)  # pyright: ignore[reportUnknownMemberType]
"""`ToolResult(envelope)` without its Python-level `__new__` (~0.1 µs)."""


class Waiting(NamedTuple):
    """An async tool's coroutine that has yielded to the event loop (`start`): the rest is `finish`'s."""

    coroutine: Coroutine[Any, Any, Any]
    waiting_on: Any


def start(tool: Tool[..., Any], kwargs: dict[str, Any]) -> ToolResult | Waiting:
    """Call an async tool (not process-isolated, with a function) and run its coroutine to its first wait:
    its result if it finished without waiting (the usual tool: no coroutine of ours, no timer, nothing to
    time out, as a tool that never waits cannot be interrupted anyway), else what `finish` goes on with."""
    function = tool.function
    assert function is not None, "start is for tools with a function"
    try:
        coroutine = function(**kwargs)
        waiting_on = coroutine.send(None)
    except StopIteration as done:
        return returned(tool, done.value)
    except BaseException as e:
        return _raised(tool, e)
    return Waiting(coroutine, waiting_on)


async def finish(
    tool: Tool[..., Any],
    waiting: Waiting,
    *,
    timeout_s: float | None,
    started: float,
    deadlines: Deadlines | None = None,
) -> ToolResult:
    """Await the rest of a tool `start` left waiting, within `timeout_s` of `started` (`time.perf_counter()`
    just before it was called: the time its first step took counts, as with a deadline set before the call;
    only that difference is used, so the two clocks need not be the same).

    The timer is made only now that the tool waits, as a tool that answers without ever waiting cannot be
    interrupted anyway (skipping the timer saves ~5 µs a call). It is `asyncio.timeout_at`'s, without its
    context manager (two coroutines, a state machine: ~1.5 µs a call), and one shared through `deadlines`
    when given (and of the running loop): on expiry the task is cancelled; the cancellation is taken back
    (`uncancel`) once the tool has ended, and the `CancelledError` it ended with becomes `TIMEOUT` unless
    someone else cancelled the task meanwhile (then it goes on). A `TimeoutError` raised after expiry counts
    as the timeout, as it does with `asyncio.timeout_at`; a tool that swallows the cancellation and returns
    has its result kept. All in this one coroutine: every wake-up of the tool goes through each coroutine
    it is awaited from, and a fan-out of 50 calls makes 50 of each."""
    coroutine, waiting_on = waiting
    if timeout_s is None:
        try:
            result = await _resume(coroutine, waiting_on)
        except BaseException as e:
            return _raised(tool, e)
        return returned(tool, result)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s - (time.perf_counter() - started)
    task = asyncio.current_task()
    assert task is not None, "tools run in a task"
    expiry = _Expiry(task, deadline)
    watch = deadlines if deadlines is not None and deadlines.loop is loop else None
    if watch is None:
        expiry.handle = loop.call_at(deadline, expiry.fire)
    else:
        watch.watch(expiry)
    try:
        result = await _resume(coroutine, waiting_on)
    except BaseException as e:
        _disarm(expiry, watch)
        if expiry.fired:
            outside = task.uncancel() > expiry.cancelling  # another cancellation came meanwhile
            if isinstance(e, TimeoutError) or (isinstance(e, asyncio.CancelledError) and not outside):
                return _timed_out(tool, timeout_s, stopped=True)
        return _raised(tool, e)
    _disarm(expiry, watch)
    if expiry.fired:
        task.uncancel()
    return returned(tool, result)


def returned(tool: Tool[..., Any], result: Any) -> ToolResult:
    """What a tool's return value comes to: the envelope it returned, or its value as JSON in an ok one."""
    if plain_scalar(result):  # the usual result, and never an envelope: no instance checks (pydantic's
        return _ok(ToolResult, (envelopes.ok(result), None))  # metaclass makes each cost ~0.2 µs)
    if isinstance(result, NeedsEnvelope | ErrorEnvelope):
        return ToolResult(result)
    data = result.data if isinstance(result, OkEnvelope) else result
    if plain_scalar(data):  # JSON already: `as_json` would return it as it is
        return ToolResult(envelopes.ok(data))
    try:
        return ToolResult(envelopes.ok(as_json(data)))
    except Exception as e:  # e.g. an object whose __repr__ raises
        return _internal(tool.name, f"its result could not be read as JSON ({type(e).__name__})", None)


def _raised(tool: Tool[..., Any], e: BaseException) -> ToolResult:
    """What a tool's exception comes to (called in its `except` block, for the traceback); the run's own
    cancellation, and what is no exception of a tool's (e.g. `GeneratorExit`), are raised again."""
    if isinstance(e, ToolError | NeedsInput):
        return _signal(tool.name, e)
    if isinstance(e, ToolCrashed):
        return _internal(tool.name, f"it raised {e.type_name}", e.traceback)
    if isinstance(e, Exception | SystemExit | KeyboardInterrupt):  # a tool's exit() or ^C ends its call only
        return _internal(tool.name, f"it raised {type(e).__name__}", traceback.format_exc())
    if isinstance(e, asyncio.CancelledError):
        task = asyncio.current_task()
        if task is not None and not task.cancelling():  # not the run's own cancellation: the tool's
            return _internal(tool.name, "it raised CancelledError", traceback.format_exc())
    raise e


def _timed_out(tool: Tool[..., Any], timeout_s: float | None, *, stopped: bool) -> ToolResult:
    return ToolResult(envelopes.timed_out(tool.name, timeout_s, tool.spec.side_effects, stopped=stopped))


def as_json(value: Any) -> Any:
    """A tool's result as JSON values, which is what the model, the journal and every event carry: models,
    dataclasses, dates, UUIDs, sets and the like as JSON does them, bytes as base64, anything else its repr."""
    return pydantic_core.to_jsonable_python(value, fallback=repr, bytes_mode="base64")


def _disarm(expiry: _Expiry, deadlines: Deadlines | None) -> None:
    if expiry.handle is not None:
        expiry.handle.cancel()
    elif deadlines is not None:
        deadlines.forget(expiry)


class _Expiry:
    """A tool's timeout, armed on its task: `fire` cancels the task and notes that it did."""

    __slots__ = ("cancelling", "deadline", "done", "fired", "handle", "task")

    def __init__(self, task: asyncio.Task[Any], deadline: float) -> None:
        self.task = task
        self.deadline = deadline
        self.cancelling = task.cancelling()
        self.fired = False
        self.done = False
        """Disarmed, or fired: `Deadlines` has no more to do with it."""
        self.handle: asyncio.TimerHandle | None = None
        """Its own timer, when it has one rather than a place in `Deadlines`."""

    def fire(self) -> None:
        self.fired = True
        self.task.cancel()


_RESOLUTION = time.get_clock_info("monotonic").resolution
"""What asyncio adds to the clock to decide which timers are due."""


class Deadlines:
    """The timeouts of tools running on one event loop, with one timer between them (an executor keeps one).

    A timer a call (`loop.call_at`) costs ~2.5 µs: a handle made, pushed on the loop's heap of timers, taken
    back, and left on the heap until its time; 50 concurrent calls double the heap that every sleep of theirs
    goes through. Deadlines here wait in a queue in the order they come, which is the order they fall due
    when calls share a timeout (the usual case: one policy, one tool); the loop has one timer, for the
    first. One that falls due before the last queued one (a shorter timeout) gets a timer of its own.
    Calls that end leave the queue as they reach its head (or all at once, when most of it has ended).
    """

    __slots__ = ("handle", "live", "loop", "queue")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: deque[_Expiry] = deque()
        self.handle: asyncio.TimerHandle | None = None
        """The loop's timer, for the first deadline queued (or an earlier one that has left)."""
        self.live = 0
        """Queued deadlines not done."""

    def watch(self, expiry: _Expiry) -> None:
        queue = self.queue
        if queue and expiry.deadline < queue[-1].deadline:
            expiry.handle = self.loop.call_at(expiry.deadline, expiry.fire)
            return
        queue.append(expiry)
        self.live += 1
        if self.handle is None:
            self.handle = self.loop.call_at(expiry.deadline, self._due)

    def forget(self, expiry: _Expiry) -> None:
        if not expiry.done:
            expiry.done = True
            self.live -= 1
        queue = self.queue
        while queue and queue[0].done:
            queue.popleft()
        if not queue:
            if self.handle is not None:
                self.handle.cancel()
                self.handle = None
        elif len(queue) > 64 and len(queue) > 2 * self.live:  # most have ended behind a long one
            self.queue = deque(e for e in queue if not e.done)

    def _due(self) -> None:
        self.handle = None
        queue = self.queue
        due = self.loop.time() + _RESOLUTION
        while queue and (queue[0].done or queue[0].deadline < due):
            expiry = queue.popleft()
            if not expiry.done:
                expiry.done = True
                self.live -= 1
                expiry.fire()
        if queue:
            self.handle = self.loop.call_at(queue[0].deadline, self._due)


@types.coroutine
def _resume(coroutine: Coroutine[Any, Any, Any], waiting_on: Any) -> Generator[Any, Any, Any]:
    """Go on with a coroutine that has already yielded `waiting_on` to the event loop, as `await` would."""
    while True:
        try:
            sent = yield waiting_on
        except GeneratorExit:
            coroutine.close()
            raise
        except BaseException as e:  # cancellation (e.g. the timer's) or anything else thrown in goes on down
            try:
                waiting_on = coroutine.throw(e)
            except StopIteration as done:
                return done.value
        else:
            try:
                waiting_on = coroutine.send(sent)
            except StopIteration as done:
                return done.value


def _signal(name: str, signal: ToolError | NeedsInput) -> ToolResult:
    """The envelope a tool's `ToolError` or `NeedsInput` asks for; `INTERNAL` if its fields cannot make one."""
    try:
        return ToolResult(envelopes.from_signal(signal))
    except ValueError:  # e.g. NeedsInput(missing=["date"]): a list where a flag or a question belongs
        what = f"its {type(signal).__name__} could not be made into an envelope"
        return _internal(name, what, traceback.format_exc())


def _internal(name: str, what: str, trace: str | None) -> ToolResult:
    return ToolResult(envelopes.internal(name, what), trace)
