"""What every Google tool shares: how it is declared, its settings, and the confirmation policy."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tether.exceptions import NeedsInput
from tether.execution import idempotency_key
from tether.packs.google._client import GoogleApi
from tether.packs.google._errors import translating
from tether.packs.google._scopes import tether_scope
from tether.packs.google._text import MAX_CHARS
from tether.tools import Tool, ToolContext, tool
from tether.types import SandboxPolicy, SideEffects, ToolCall, ToolSpec

__all__ = ["DEFAULT_CONFIRM", "Kit", "creation_key", "page_size"]

DEFAULT_CONFIRM = frozenset({"gmail_send", "drive_delete", "calendar_delete", "tasks_delete", "sheets_clear"})
"""Tools that ask for the user's confirmation (a `needs`) before acting: sending mail and deleting anything."""

_POLICY = SandboxPolicy(network=True, timeout_ms=60_000)
MAX_PAGE = 100


@dataclass(frozen=True)
class Kit:
    """The connection and settings a tool family is built with."""

    api: GoogleApi
    confirm: frozenset[str] = DEFAULT_CONFIRM
    max_chars: int = MAX_CHARS

    def tool(
        self,
        name: str,
        scopes: Iterable[str],
        side_effects: SideEffects,
        *,
        idempotency_fields: Iterable[str] = (),
    ) -> Callable[[Callable[..., Any]], Tool[..., Any]]:
        """Declare a Google tool: the Google scopes it needs (short names) become its tether scopes, and
        Google's errors become its envelopes."""
        needed = tuple(scopes)

        def declare(function: Callable[..., Any]) -> Tool[..., Any]:
            return tool(
                name=name,
                category="google",
                side_effects=side_effects,
                scopes=[tether_scope(s) for s in needed],
                sandbox=_POLICY,
                idempotency_fields=idempotency_fields,
            )(translating(needed)(function))

        return declare

    def confirm_first(self, name: str, confirmed: bool, question: str) -> None:
        """Ask the user (a `needs`) before `name` acts, when the policy says so and they have not confirmed."""
        if name in self.confirm and not confirmed:
            raise NeedsInput(confirm=f"{question} Call again with confirmed=true once the user agrees.")


def creation_key(
    context: ToolContext | None, name: str, fields: tuple[str, ...], arguments: dict[str, Any]
) -> str:
    """tether's idempotency key of a create call (its declared `fields`, per principal): the same key the
    executor's idempotency guard uses, so the item Google stores and the journal's entry name one request.
    Called outside an executor (no context), the key comes from `arguments` alone."""
    spec = ToolSpec(name=name, idempotency_fields=fields)
    if context is None:
        return idempotency_key(
            ToolCall(id="", name=name, arguments=arguments), spec, principal=None, scope=""
        )
    return idempotency_key(context.call, spec, principal=context.principal, scope=context.session_id or "")


def page_size(requested: int) -> int:
    """A page size Google accepts and a model's context can hold: 1 to 100."""
    return max(1, min(MAX_PAGE, requested))
