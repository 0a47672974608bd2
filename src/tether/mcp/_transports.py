"""The HTTP transport an MCPToolset opens, the URLs it accepts, and one line for a failure of either."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tether.exceptions import UserError

__all__ = ["check_url", "describe", "first_failure", "streamable_http"]


@asynccontextmanager
async def streamable_http(url: str, headers: dict[str, str], auth: httpx2.Auth | None) -> AsyncIterator[Any]:
    async with (
        create_mcp_http_client(
            headers=headers, auth=auth
        ) as http,  # ours to close: the SDK closes only its own
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def check_url(url: str) -> None:
    if not url.startswith(("http://", "https://")):
        raise UserError(
            f"An MCP server URL starts with http:// or https://, e.g. http://127.0.0.1:8000/mcp; got {url!r}."
        )


def first_failure(error: BaseException) -> BaseException:
    """The first real failure inside the exception groups of the SDK's task groups."""
    while isinstance(error, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", error)
        error = group.exceptions[0]
    return error


def describe(error: BaseException) -> str:
    """One line for a failure."""
    error = first_failure(error)
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}" if text != type(error).__name__ else text
