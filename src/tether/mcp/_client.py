"""`MCPToolset`: an MCP server's tools as a tether toolset, kept connected on one of two event loops.

How the toolset is opened decides where its connection lives, once and for all:

- `async with toolset:` keeps it on the caller's event loop, as a task of the block: calls go straight to
  the SDK's session with no hop between threads (the fast path, as `tether run` and `tether serve` use).
- Any other use (`with toolset:`, or listing and calling it with no block at all) starts a private event
  loop in a daemon thread, so the toolset is as plain as any other: built without `await`, listed
  synchronously, and called from whichever event loop the executor runs on, each call one hop away.

Either way the connection is kept the same: a server that crashed or hung is restarted and one that went
away reconnected, waiting longer after each failure; meanwhile calls answer `CONNECTION_INACTIVE`. A stdio
server's stderr goes to a file, not the user's terminal (`stderr_tail`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import shlex
import tempfile
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp.client.session import IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client

from mcp import Client, MCPError, StdioServerParameters
from tether.exceptions import ToolError, UserError
from tether.mcp._changes import listens, watch_changes
from tether.mcp._offered import offered_tools
from tether.mcp._transports import check_url, describe, first_failure, streamable_http
from tether.tools import AbstractToolset, Tool

__all__ = ["MCPToolset"]

T = TypeVar("T")
AnyTool = Tool[..., Any]
Transport = AbstractAsyncContextManager[Any]

_STDERR_TAIL = 2000
_GIVE_UP_AFTER = 3
"""Failed attempts after which the first look at the tools stops waiting for a server that never listed."""
_open: weakref.WeakSet[MCPToolset] = weakref.WeakSet()
_log = logging.getLogger("tether.mcp")


class MCPToolset(AbstractToolset):
    """The tools of one MCP server, each called through tether's executor like any other tool.

    Build one with `MCPToolset.stdio("uvx mcp-server-time")`, `MCPToolset.http(url)` or
    `MCPToolset.sse(url)`. Open it with `async with toolset:` to keep the connection on your event loop
    (the block waits for the server's listing, and stops the server at its end); otherwise the server
    starts in a thread of its own at the first `with toolset:`, look at the tools or `connect()`, and
    `close()` stops it (done at exit for any left open).

    Tool annotations become side effects (`readOnlyHint` -> `none`, `idempotentHint` -> `idempotent`,
    otherwise `mutating`); output schemas and structured results are kept. A server that lists
    resources also gets a `read_resource` tool, one that lists prompts a `get_prompt` tool.
    """

    def __init__(
        self,
        name: str,
        transport: Callable[[TextIO], Transport],
        *,
        connect_timeout_s: float = 30.0,
        ping_timeout_s: float = 5.0,
        max_backoff_s: float = 30.0,
    ):
        """Use the `stdio`, `http` and `sse` constructors; this one takes a transport factory.

        Args:
            name: The server's name in messages, e.g. its command.
            transport: Makes the SDK transport for one connection, given where a process's stderr goes.
            connect_timeout_s: How long the first look at the tools waits for the server's listing.
            ping_timeout_s: After a call timed out, how long the server has to answer a request for its
                tool list before it is taken for hung and restarted.
            max_backoff_s: The longest wait between two attempts to (re)connect.
        """
        self.name = name
        self._transport = transport
        self.connect_timeout_s = connect_timeout_s
        self.ping_timeout_s = ping_timeout_s
        self.max_backoff_s = max_backoff_s
        self._stderr: TextIO = tempfile.TemporaryFile(mode="a+", encoding="utf-8", errors="replace")  # noqa: SIM115 - kept open for the toolset's life
        self._tools: Mapping[str, AnyTool] = {}
        self._client: Client | None = None
        self._failure: str | None = None
        self._retry_at = 0.0
        self._listed = False
        self._ready = threading.Event()  # set once the server first listed its tools, or cannot start at all
        self._closing = False
        self._lost: anyio.Event | None = None
        self._checking: anyio.Event | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._relisting = False  # a listing after a change notification is under way
        self._stale = False  # another change was heard while it was
        self._backoff: anyio.CancelScope | None = None
        self._kept = threading.Event()  # set when the keeper has stopped the server for good
        self._mode: Literal["idle", "thread", "link"] = "idle"
        self._starting = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None  # where the connection lives, once opened
        self._thread: threading.Thread | None = None
        self._keeper: Any = None  # the thread path's future of `_keep`
        self._group: anyio.abc.TaskGroup | None = None  # the `async with` path's tasks
        self._listed_async: anyio.Event | None = None
        self._kept_async: anyio.Event | None = None

    # ---------------------------------------------------------------------------------------- builders

    @classmethod
    def stdio(
        cls,
        command: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **options: Any,
    ) -> MCPToolset:
        """A server run as a child process, spoken to over its stdin and stdout.

        Args:
            command: The command line, e.g. `"uvx mcp-server-time"` or `["python", "server.py"]`.
            env: Variables added to the few the SDK passes on (PATH, HOME, ...).
            cwd: Where the server runs.
            **options: `connect_timeout_s`, `ping_timeout_s`, `max_backoff_s`.
        """
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise UserError(
                'An MCP stdio server needs a command, e.g. MCPToolset.stdio("uvx mcp-server-time").'
            )
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=dict(env) if env else None, cwd=cwd
        )
        return cls(shlex.join(argv), lambda errlog: stdio_client(params, errlog=errlog), **options)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx2.Auth | None = None,
        **options: Any,
    ) -> MCPToolset:
        """A server at a streamable HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`.

        Args:
            url: The endpoint.
            headers: Sent with every request, e.g. `{"Authorization": "Bearer ..."}`.
            auth: Signs every request, e.g. the SDK's `mcp.client.auth.OAuthClientProvider` for a server
                behind OAuth.
            **options: `connect_timeout_s`, `ping_timeout_s`, `max_backoff_s`.
        """
        check_url(url)
        return cls(url, lambda _: streamable_http(url, dict(headers or {}), auth), **options)

    @classmethod
    def sse(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx2.Auth | None = None,
        **options: Any,
    ) -> MCPToolset:
        """A server speaking the legacy HTTP+SSE transport, e.g. `http://127.0.0.1:8000/sse` (as `http`)."""
        check_url(url)
        return cls(url, lambda _: sse_client(url, headers=dict(headers or {}), auth=auth), **options)

    # ------------------------------------------------------------------------------------------ public

    def tools(self) -> Mapping[str, AnyTool]:
        """The server's tools; the first look waits (up to `connect_timeout_s`) for its listing.

        Raises:
            UserError: the server never answered: it would not start, or is not reachable.
        """
        if not self._listed:
            if self._closing:
                raise UserError(f"The MCP server {self.name} was closed before it listed its tools.")
            self._start_thread()
            self._ready.wait(self.connect_timeout_s)
            if not self._listed:
                raise UserError(f"The MCP server {self.name} did not start: {self._why_down()}")
        return self._tools

    async def connect(self) -> None:
        """Wait, without blocking the event loop, until the server has listed its tools (see `tools`)."""
        if not self._listed:
            await anyio.to_thread.run_sync(self.tools)

    def stderr_tail(self) -> str:
        """The end of what the server process wrote to stderr (stdio servers)."""
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - _STDERR_TAIL)
        return os.pread(fd, size - start, start).decode("utf-8", "replace")

    def close(self) -> None:
        """Stop the server (or disconnect) and the thread that kept it; calls then answer CONNECTION_INACTIVE.

        Opened with `async with`, the server is stopped at the end of the block; this only asks for it.
        """
        if self._closing:
            return
        self._closing = True
        _open.discard(self)
        loop = self._loop
        if self._mode == "link":
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(self._wake)
            return
        if loop is not None and self._thread is not None:
            if loop.is_running():
                loop.call_soon_threadsafe(self._wake)  # ends the session as a lost connection ends it
                if not self._kept.wait(timeout=10):  # the server stopped (the SDK kills one that will not)
                    self._keeper.cancel()
                with contextlib.suppress(Exception):  # a loop that will not settle is stopped all the same
                    asyncio.run_coroutine_threadsafe(_settle(), loop).result(timeout=5)
                loop.call_soon_threadsafe(loop.stop)
                self._thread.join(timeout=5)
            if not self._thread.is_alive():
                loop.close()
        self._stderr.close()

    @property
    def closed(self) -> bool:
        return self._closing

    @staticmethod
    def close_all() -> None:
        """Close every MCPToolset still open (done at exit too), e.g. at the end of a command."""
        for toolset in list(_open):
            toolset.close()

    def __enter__(self) -> MCPToolset:
        """Start the server in a thread of its own (see the module); the block's end stops it."""
        self._start_thread()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    async def __aenter__(self) -> MCPToolset:
        """Connect on this event loop and wait (up to `connect_timeout_s`) for the server's listing.

        Raises:
            UserError: the server did not start, or the toolset was already used (and started in a thread).
        """
        with self._starting:
            if self._mode != "idle" or self._closing:
                raise UserError(
                    f"The MCP server {self.name} was already "
                    + ("closed" if self._closing else "started in a thread by an earlier use")
                    + ": open a toolset with `async with` before anything lists or calls its tools."
                )
            self._mode = "link"
        self._loop = asyncio.get_running_loop()
        self._listed_async, self._kept_async = anyio.Event(), anyio.Event()
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        group.start_soon(self._keep)
        try:
            with anyio.move_on_after(self.connect_timeout_s):
                await self._listed_async.wait()
        except BaseException:  # cancelled while waiting (e.g. Ctrl-C): stop what started, then go on
            await self._shut_link()
            raise
        if not self._listed:
            why = self._why_down()
            await self._shut_link()
            raise UserError(f"The MCP server {self.name} did not start: {why}")
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._shut_link()

    async def _shut_link(self) -> None:
        """Stop the server as a lost connection ends it, then the block's tasks (cancelled or not)."""
        self._closing = True
        group = self._group
        if group is None:
            return
        self._group = None
        self._wake()
        with anyio.move_on_after(10, shield=True):  # the SDK kills a server that will not stop
            assert self._kept_async is not None
            await self._kept_async.wait()
        group.cancel_scope.cancel()
        try:
            await group.__aexit__(None, None, None)  # the group's scope: exited outside any scope of ours
        finally:
            self._stderr.close()

    def _start_thread(self) -> None:
        """The thread path: a private event loop in a daemon thread keeps the connection (once)."""
        with self._starting:
            if self._mode != "idle" or self._closing:
                return
            self._mode = "thread"
            self._loop = loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=loop.run_forever, name=f"tether-mcp {self.name}", daemon=True
            )
            self._thread.start()
            self._keeper = asyncio.run_coroutine_threadsafe(self._keep(), loop)
            _open.add(self)

    # ---------------------------------------------------------------------------------- the connection

    async def _keep(self) -> None:
        """Connect, list, wait for the connection to be lost, and again, backing off after failures."""
        try:
            await self._reconnecting()
        finally:
            self._kept.set()
            if self._kept_async is not None:
                self._kept_async.set()

    async def _reconnecting(self) -> None:
        delay, failures = 0.0, 0
        while not self._closing:
            self._lost = anyio.Event()
            try:
                async with (
                    Client(self._transport(self._stderr), message_handler=self._on_message) as client,
                    anyio.create_task_group() as group,
                ):
                    if listens(client):
                        await group.start(self._listen, client)  # listening before listing: no change missed
                    self._client = client  # before the listing says ready: a first call finds it
                    await self._list(client)
                    self._failure, delay, failures = None, 0.0, 0
                    await self._lost.wait()
                    group.cancel_scope.cancel()
            except Exception as e:  # any failure of the server or its transport: say why, retry later
                self._failure = self._failure or describe(e)
                failures += 1
                if (
                    isinstance(first_failure(e), FileNotFoundError | PermissionError)
                    or failures >= _GIVE_UP_AFTER
                ):
                    self._mark_ready()  # never listed: stop making the first look wait (retries go on)
            finally:
                self._client = None
            if self._failure is None:
                self._failure = "the connection was lost"
            delay = min(self.max_backoff_s, delay * 2 or 0.5)
            self._retry_at = time.monotonic() + delay
            with anyio.CancelScope() as self._backoff:
                await anyio.sleep(delay)

    def _wake(self) -> None:
        """Stop waiting: for the connection to be lost, or to try again (on the connection's loop)."""
        if self._lost is not None:
            self._lost.set()
        if self._backoff is not None:
            self._backoff.cancel()

    async def _list(self, client: Client) -> None:
        self._tools = await offered_tools(client, self._send)  # a new mapping: toolsets built on it rebuild
        self._listed = True
        self._mark_ready()

    def _mark_ready(self) -> None:
        self._ready.set()
        if self._listed_async is not None:
            self._listed_async.set()

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification) and self._client is not None:
            self._relist(self._client)

    def _relist(self, client: Client) -> None:
        """List the tools again, once for any number of changes heard meanwhile: a server flooding change
        notifications costs one listing in flight and one pending, never a task (and a request) each."""
        if self._relisting:
            self._stale = True
            return
        self._relisting = True
        self._spawn(self._relist_until_fresh(client))

    async def _relist_until_fresh(self, client: Client) -> None:
        try:
            while self._client is client:
                self._stale = False
                await self._list(client)
                if not self._stale:
                    return
        except MCPError as e:
            if e.code == types.CONNECTION_CLOSED:
                self._lose(client)
            else:  # the server refused to list: its last listing stays, the next change lists again
                _log.warning("MCP server %s: listing its changed tools failed: %s", self.name, e.message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            self._lose(client)
        finally:
            self._relisting = False

    async def _listen(self, client: Client, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Refresh the tools at each change the server reports (protocol 2026 on; older ones notify); see
        `watch_changes` for a server that does not keep the stream."""
        await watch_changes(
            client,
            self.name,
            self.ping_timeout_s,
            lambda: self._list(client),
            lambda: self._check(client),
            task_status=task_status,
        )

    def _send(self, request: Callable[[Client], Awaitable[T]]) -> Awaitable[T]:
        """One request on the connection, from the caller's event loop (the tools' `Send`)."""
        return self._submit(self._request(request))

    async def _submit(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the connection's loop; cancelling the caller (a timeout) cancels it there."""
        if self._mode == "link" and not self._closing:
            if asyncio.get_running_loop() is self._loop:
                return await work  # the `async with` path: the session is on this loop
            work.close()
            raise ToolError(
                "CONNECTION_INACTIVE",
                f"the MCP server {self.name} is connected on another event loop than this call's.",
                recoverable=False,
                suggestion="Do not call its tools again in this run; tell the user the server is unreachable.",
            )
        if self._mode == "idle":
            self._start_thread()
        if self._closing or self._loop is None:
            work.close()
            raise self._inactive()
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    async def _request(self, send: Callable[[Client], Awaitable[T]]) -> T:
        if self._checking is not None:
            await self._checking.wait()  # a ping decides whether the server is still there
        client = self._client
        if client is None:
            raise self._inactive()
        try:
            return await send(client)
        except MCPError as e:
            if e.code != types.CONNECTION_CLOSED:
                raise ToolError(
                    "TOOL_ERROR", f"the MCP server {self.name} refused the call: {e.message}"
                ) from e
            self._lose(client)
            raise self._inactive() from e
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as e:
            self._lose(client)
            raise self._inactive() from e
        except asyncio.CancelledError:
            if self._client is client and self._checking is None:
                self._spawn(self._check(client))  # timed out: hung, or only slow?
            raise

    async def _check(self, client: Client) -> None:
        self._checking = checking = anyio.Event()
        try:
            with anyio.move_on_after(self.ping_timeout_s) as scope:
                await client.list_tools(cache_mode="refresh")  # ping is gone from the 2026 protocol
            if scope.cancelled_caught:
                self._failure = (
                    f"it did not answer within {self.ping_timeout_s:g}s after a call timed out (hung)"
                )
                self._lose(client)
        except Exception as e:
            self._failure = describe(e)
            self._lose(client)
        finally:
            self._checking = None
            checking.set()

    def _lose(self, client: Client) -> None:
        if self._client is client and self._lost is not None:
            self._client = None
            self._failure = self._failure or "it closed the connection (it may have crashed)"
            self._lost.set()

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        if self._group is not None:  # the `async with` path: ended with the block
            self._group.start_soon(_awaited, work)
            return
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _inactive(self) -> ToolError:
        wait = max(0.0, self._retry_at - time.monotonic())
        return ToolError(
            "CONNECTION_INACTIVE",
            f"the MCP server {self.name} is not connected ({self._failure or 'not started yet'}); tether is "
            + ("stopping it." if self._closing else "restarting it."),
            recoverable=not self._closing,
            suggestion=(
                "Do not call its tools again in this run; tell the user the server is stopped."
                if self._closing
                else f"Wait about {max(1, round(wait))}s and call again; if it keeps failing, tell the user."
            ),
        )

    def _why_down(self) -> str:
        why = self._failure or f"no answer within {self.connect_timeout_s:g}s"
        tail = self.stderr_tail().strip() if not self._stderr.closed else ""
        return f"{why}; its stderr ends: {tail[-500:]}" if tail else why

    def __repr__(self) -> str:
        return f"MCPToolset({self.name!r})"


atexit.register(MCPToolset.close_all)


async def _awaited(work: Coroutine[Any, Any, Any]) -> None:
    await work


async def _settle() -> None:
    """Let closed sockets finish closing (their callbacks are queued on the loop) before it stops."""
    for _ in range(5):
        await asyncio.sleep(0.01)
