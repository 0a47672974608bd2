"""The upstream model: an OpenAI-compatible server asked for plain text, streamed, its failures made errors.

The request goes out with `httpx2` rather than through `tether.models.OpenAIModel`: a proxy passes on the
client's sampling fields (temperature, stop, max_tokens, ...) that a `ModelRequest` does not carry, and
reads the stream with no per-chunk object building.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, cast

import httpx2

from tether.serve._openai_wire import ApiError

__all__ = ["Piece", "Upstream", "UpstreamStream"]

_ERROR_BODY_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where one model name served by the endpoint really runs, and how it writes tool calls.

    Attributes:
        base_url: The upstream's OpenAI-compatible API, e.g. `http://localhost:8000/v1` (vLLM).
        model: The upstream's own model id.
        dialect: The text dialect the model writes tool calls in (`hermes`, `pythonic`, `qwen3_coder_xml`,
            ...): tools are taught in it and calls read out of the text.
        api_key_env: The environment variable holding the upstream's API key (none: no key is sent).
        timeout: Seconds to wait for the upstream to connect, and for each piece of its stream.
        reasoning_open: The upstream's chat template opens the reasoning block (see `Agent`).
    """

    base_url: str
    model: str
    dialect: str = "hermes"
    api_key_env: str | None = None
    timeout: float = 60.0
    reasoning_open: bool = False


@dataclass(slots=True)
class Piece:
    """What one upstream chunk carried."""

    text: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None


class UpstreamStream:
    """One streamed upstream request: `open()` (errors before any byte reach the client as a status), then
    `pieces()`, then `aclose()`."""

    def __init__(self, client: httpx2.AsyncClient, upstream: Upstream, body: dict[str, Any]):
        self.upstream = upstream
        headers = {"accept": "text/event-stream"}
        if upstream.api_key_env and (key := os.environ.get(upstream.api_key_env)):
            headers["authorization"] = f"Bearer {key}"
        url = upstream.base_url.rstrip("/") + "/chat/completions"
        timeout = httpx2.Timeout(upstream.timeout, connect=min(upstream.timeout, 10.0))
        self._request = client.build_request("POST", url, json=body, headers=headers, timeout=timeout)
        self._client = client
        self._response: httpx2.Response | None = None

    @property
    def where(self) -> str:
        return f"upstream {self.upstream.model!r} at {self.upstream.base_url}"

    async def open(self) -> None:
        try:
            self._response = response = await self._client.send(self._request, stream=True)
        except httpx2.TimeoutException as e:
            raise self._timeout() from e
        except httpx2.HTTPError as e:
            raise ApiError(
                502,
                f"{self.where} could not be reached ({type(e).__name__}: {e})",
                type="upstream_error",
                code="upstream_unreachable",
                suggestion="Check that the upstream server is running and its base_url is right.",
            ) from e
        if response.status_code >= 400:
            raise await self._status_error(response)
        kind = response.headers.get("content-type", "")
        if not kind.startswith("text/event-stream"):
            await response.aclose()
            raise _garbage(self.where, f"answered {kind or 'no content type'}, not an event stream")

    async def pieces(self) -> AsyncIterator[Piece]:
        """The upstream's deltas until `[DONE]` or the end of its stream."""
        response = self._response
        assert response is not None, "open() first"
        try:
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue  # comments, event names, keep-alives
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                yield _piece(self.where, data)
        except httpx2.TimeoutException as e:
            raise self._timeout() from e
        except httpx2.HTTPError as e:
            raise ApiError(
                502, f"{self.where} broke off its stream ({type(e).__name__}: {e})", type="upstream_error",
                code="upstream_disconnected",
            ) from e  # fmt: skip

    async def aclose(self) -> None:
        if self._response is not None:
            await self._response.aclose()

    def _timeout(self) -> ApiError:
        return ApiError(
            504,
            f"{self.where} did not answer within {self.upstream.timeout:g} s",
            type="upstream_error",
            code="upstream_timeout",
            suggestion="Retry, or raise the upstream's timeout in the server's configuration.",
        )

    async def _status_error(self, response: httpx2.Response) -> ApiError:
        raw = (await response.aread())[:_ERROR_BODY_LIMIT].decode(errors="replace")
        await response.aclose()
        message = raw
        try:
            parsed: Any = json.loads(raw)
            if isinstance(parsed, dict) and isinstance(
                error := cast("dict[str, Any]", parsed).get("error"), dict
            ):
                message = str(cast("dict[str, Any]", error).get("message", raw))
        except ValueError:
            pass
        # the client's request may be at fault (context too long, a bad parameter): say so with the same status;
        # anything else is the upstream's (or this server's configuration's) failure
        status = response.status_code if response.status_code in (400, 404, 413, 422) else 502
        suggestion = None
        env = self.upstream.api_key_env
        if response.status_code in (401, 403) and env and not os.environ.get(env):
            message += f" (no key was sent: the environment variable {env} is not set, or empty)"
            suggestion = f"Export {env} where tether serve runs, then restart it."
        return ApiError(
            status,
            f"{self.where} answered {response.status_code}: {message.strip() or 'no message'}",
            type="upstream_error" if status == 502 else "invalid_request_error",
            code=f"upstream_{response.status_code}",
            suggestion=suggestion,
        )


def _piece(where: str, data: str) -> Piece:
    try:
        parsed: Any = json.loads(data)
    except ValueError:
        raise _garbage(where, f"streamed an event that is not JSON: {data[:200]!r}") from None
    if not isinstance(parsed, dict):
        raise _garbage(where, f"streamed {type(parsed).__name__} where a chunk object belongs")
    obj = cast("dict[str, Any]", parsed)
    if isinstance(error := obj.get("error"), dict):
        message = cast("dict[str, Any]", error).get("message", "no message")
        raise ApiError(
            502, f"{where} failed mid-stream: {message}", type="upstream_error", code="upstream_error"
        )
    piece = Piece(usage=obj.get("usage") if isinstance(obj.get("usage"), dict) else None)
    choices = obj.get("choices")
    if isinstance(choices, list) and choices and isinstance(choice := cast("list[Any]", choices)[0], dict):
        choice = cast("dict[str, Any]", choice)
        delta: Any = choice.get("delta")
        if isinstance(delta, dict):
            delta = cast("dict[str, Any]", delta)
            if isinstance(text := delta.get("content"), str):
                piece.text = text
            reasoning = delta.get("reasoning_content", delta.get("reasoning"))
            if isinstance(reasoning, str):
                piece.reasoning = reasoning
        if isinstance(reason := choice.get("finish_reason"), str):
            piece.finish_reason = reason
    return piece


def _garbage(where: str, what: str) -> ApiError:
    return ApiError(
        502,
        f"{where} {what}",
        type="upstream_error",
        code="upstream_garbage",
        suggestion="Is the base_url the API's (it usually ends in /v1), and does the server speak Chat Completions?",
    )
