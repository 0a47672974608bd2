"""Work done for a request that is abandoned when its client goes away (a non-streamed answer)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

from starlette.requests import Request

__all__ = ["ClientGone", "unless_disconnected"]

T = TypeVar("T")


class ClientGone(Exception):
    """The client disconnected before the answer was ready; the work was cancelled."""


async def unless_disconnected(request: Request, work: Awaitable[T]) -> T:
    """`work`'s result, or `ClientGone` once the client disconnects, `work` then cancelled (a model run, an
    upstream request: nobody would read their answer).

    The request's body must have been read already: the server's next ASGI message is then the disconnect.
    """
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait([task, watcher], return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):  # its cancellation is the point, not an error
                await task
    if task.cancelled() or not task.done():
        raise ClientGone
    return task.result()


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass  # a stray body message: the body was read already
