"""Meowstik's remaining tool types (seed 000): web_search, file_put and custom."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from tether import envelopes
from tether.builtin import Roots
from tether.exceptions import ToolError, UserError
from tether.packs.meowstik._budget import approx_tokens
from tether.packs.meowstik._search import SearchBackend, SearchFailed
from tether.tools import Tool, Toolset, tool
from tether.types import ErrorCode, ErrorEnvelope, SandboxPolicy, ToolCall

__all__ = ["meowstik_tools"]

_MAX_RESULTS = 10
_WEB = SandboxPolicy(network=True, timeout_ms=30_000)


def meowstik_tools(
    *,
    search: SearchBackend | None = None,
    roots: Sequence[str | os.PathLike[str]] = (),
    custom: Mapping[str, Tool[..., Any]] | None = None,
) -> Toolset:
    """web_search, and where configured file_put (files in `roots`) and custom (the user's own tools, by
    name)."""
    tools: list[Tool[..., Any]] = []
    if search is not None:
        tools.append(_web_search(search))
    if roots:
        confined = Roots(roots)
        tools.append(_file_put(confined))
    if custom:
        tools.append(_custom(dict(custom)))
    return Toolset(*tools)


def _web_search(backend: SearchBackend) -> Tool[..., Any]:
    @tool(name="web_search", category="web", side_effects="none", sandbox=_WEB)
    def web_search(query: str, maxTokens: int = 1000) -> dict[str, Any] | ErrorEnvelope:
        """Search the web: titles, links and snippets, cut to fit `maxTokens`.

        Args:
            query: What to search for.
            maxTokens: The most tokens the results may take (estimated at four characters a token).
        """
        if not query.strip():
            raise ToolError(
                ErrorCode.INVALID_ARGS, "the query is empty", suggestion="Say what to search for."
            )
        try:
            found = backend.search(query, _MAX_RESULTS)
        except SearchFailed as failure:
            return _search_failure(backend.name, failure)
        results: list[dict[str, str]] = []
        used = 0
        budget = max(1, maxTokens)
        for hit in found:
            entry = {"title": hit.title, "url": hit.url, "snippet": hit.snippet}
            cost = approx_tokens(f"{hit.title} {hit.url} {hit.snippet}") + 8  # keys and punctuation
            if used + cost > budget:
                room = (budget - used - approx_tokens(f"{hit.title} {hit.url}") - 8) * 4
                if room >= 40 and not results:  # a first hit is shown shortened rather than not at all
                    entry["snippet"] = hit.snippet[:room] + "…"
                    results.append(entry)
                    used = budget
                break
            results.append(entry)
            used += cost
        out: dict[str, Any] = {"backend": backend.name, "results": results, "approxTokens": used}
        if len(results) < len(found) or (results and results[-1]["snippet"].endswith("…")):
            out["truncated"] = True
            out["notice"] = (
                f"[{len(found) - len(results)} more results did not fit in maxTokens={maxTokens}; "
                "raise maxTokens to see them]"
            )
        return out

    return web_search


def _search_failure(backend: str, failure: SearchFailed) -> ErrorEnvelope:
    if failure.status == 429 or (failure.status or 0) >= 500:
        try:
            wait = float(failure.retry_after) if failure.retry_after else 2.0
        except ValueError:
            wait = 2.0
        return envelopes.error(
            ErrorCode.RATE_LIMITED,
            f"{backend} search is limiting requests: {failure}",
            recoverable=True,
            suggestion=f"Wait {wait:g} seconds, then search again.",
            details={"retry_after_s": wait, "status": failure.status},
        )
    if failure.status in (401, 403):
        return envelopes.error(
            ErrorCode.UNAUTHORIZED,
            f"{backend} search refused the key: {failure}",
            recoverable=False,
            suggestion="Do not retry. Tell the user the search API key needs fixing.",
        )
    return envelopes.error(
        "UNREACHABLE",
        f"{backend} search failed: {failure}",
        recoverable=True,
        suggestion="Try again later, or answer without searching.",
    )


def _file_put(roots: Roots) -> Tool[..., Any]:
    @tool(name="file_put", category="fs", side_effects="idempotent")
    def file_put(path: str, content: str) -> dict[str, Any]:
        """Save text to a file in the workspace, replacing it if it exists (folders are not created).

        Args:
            path: Where, relative to the workspace, e.g. `notes/today.md`.
            content: The text to write.
        """
        fd = roots.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, what="file")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(content)
        return {"path": path, "bytes": len(content.encode())}

    return file_put


def _custom(tools: dict[str, Tool[..., Any]]) -> Tool[..., Any]:
    for key, inner in tools.items():
        if inner.function is None or inner.spec.scopes or inner.spec.requires_why or inner.context_parameter:
            raise UserError(
                f"custom tool {key!r} needs scopes, a `why` or its call context, which `custom` cannot pass on; "
                "give it to the agent as a tool of its own instead."
            )
    names = ", ".join(sorted(tools))

    @tool(name="custom", category="custom", side_effects="mutating")
    async def custom(name: str, parameters: dict[str, Any] | None = None) -> Any:
        """Run one of the user's own tools by name.

        Args:
            name: Which of the user's tools.
            parameters: Its arguments.
        """
        chosen = tools.get(name)
        if chosen is None or chosen.function is None:
            raise ToolError(
                ErrorCode.UNKNOWN_TOOL, f"no custom tool named {name!r}", suggestion=f"Use one of: {names}."
            )
        validated = chosen.validate_call(ToolCall(id="custom", name=name, arguments=parameters or {}))
        if not validated.ok:
            problems = "; ".join(f"{p.path}: {p.message}" for p in validated.problems)
            raise ToolError(
                ErrorCode.INVALID_ARGS, f"{name}: {problems}", suggestion="Fix the parameters and call again."
            )
        kwargs = chosen.call_arguments(validated)
        if chosen.is_async:
            return await chosen.function(**kwargs)
        return await anyio.to_thread.run_sync(functools.partial(chosen.function, **kwargs))

    return custom.with_spec(
        custom.spec.model_copy(update={"description": f"{custom.spec.description} Tools: {names}."})
    )
