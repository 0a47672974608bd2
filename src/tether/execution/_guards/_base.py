"""What every guard sees (`Attempt`) and what it is (`Guard`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import pydantic_core

from tether.execution._decisions import Decision
from tether.execution._plain import plain_arguments
from tether.execution._policy import Policy
from tether.execution._run import Run
from tether.store import JournalEntry
from tether.store.internal import RateToken, storable, storable_text
from tether.tools import SecretText, Tool, ValidatedCall, redact
from tether.types import ToolCall

__all__ = ["Attempt", "Columns", "Guard", "applies"]

Columns = tuple[str, str, "str | None", tuple[dict[str, Any], ...], bool]
"""A call's `call_id`, `tool`, `why`, `repairs` and `repaired` journal columns (`Attempt.columns`)."""


@dataclass(slots=True)
class Attempt:
    """One call on its way through the guards."""

    call: ToolCall
    """The call as it will run; the schema guard replaces it with the validated (coerced) call."""
    tool: Tool[..., Any] | None
    """The tool the call names, or `None` if the toolset has no such tool."""
    run: Run
    policy: Policy
    validated: ValidatedCall | None = None
    idempotency_key: str | None = None
    """Set by the executor once the arguments are validated."""
    intent: JournalEntry | None = None
    """The intent entry, once the idempotency guard has claimed the call in the journal."""
    rate_token: RateToken | None = None
    """The rate-limit token the rate-limit guard left for the journal to take in the transaction that writes
    the intent (when the buckets are the journal's own): one commit fewer a call."""
    _arguments: tuple[ToolCall, dict[str, Any]] | None = field(default=None, init=False, repr=False)
    _secrets: SecretText | None = field(default=None, init=False, repr=False)
    """The run's secret values (set with `arguments`), when it knows any: the call's own, if the tool's
    schema marks some, learned first."""
    _columns: tuple[ToolCall, Columns] | None = field(default=None, init=False, repr=False)

    def columns(self) -> Columns:
        """The call's id, tool name, `why` and repairs as every journal entry of it keeps them (worked out
        once per version of the call): a model's strings as they are, unless not plain ASCII (checked in C,
        as the usual case must cost nothing) or longer than their column."""
        cached = self._columns
        call = self.call
        if cached is not None and cached[0] is call:
            return cached[1]
        values = call.__dict__  # the fields, read once each (a model's attribute costs ~0.05 µs a read)
        why = values["why"]
        if why is None:
            why = values["arguments"].get("why")
        call_id, name = values["id"], values["name"]
        both = call_id + name  # one check of the two for the usual pair: short, ASCII, without NUL
        if not both.isascii() or len(both) > 256 or "\x00" in both:
            call_id, name = _column_text(call_id, 256), _column_text(name, 256)
        if not isinstance(why, str):
            why = None
        elif not why.isascii() or "\x00" in why:
            why = storable_text(why)
        provenance = values["provenance"]
        repairs = provenance.repairs if provenance is not None else ()  # `call.repairs`
        shown = tuple(r.model_dump(mode="json") for r in repairs) if repairs else ()
        if why is not None or shown:  # a secret quoted in the why or a repair
            known = self._secrets if (a := self._arguments) is not None and a[0] is call else self.secrets()
            if known is not None:
                why = None if why is None else known.text(why)
                shown = tuple(known.json(r) for r in shown)
        columns: Columns = (call_id, name, why, shown, bool(repairs))
        self._columns = (call, columns)
        return columns

    def annotations(self) -> tuple[str, ...]:
        """The call's annotations as the journal keeps them (a secret quoted in one redacted)."""
        notes = self.call.annotations
        known = self.secrets() if notes else None
        return tuple(known.text(n) for n in notes) if known else notes

    def secrets(self) -> SecretText | None:
        """The secret values the run knows, the call's arguments' included (None while there are none)."""
        self.arguments()
        return self._secrets

    def arguments(self) -> dict[str, Any]:
        """The call's arguments as the journal and the records keep them: JSON any journal can hold, with
        what the tool's schema marks secret redacted, and every secret the run knows wherever an argument
        echoes it, whatever the tool (worked out once per version of the call)."""
        cached = self._arguments
        if cached is not None and cached[0] is self.call:
            return cached[1]
        schema = self.tool.spec.input_schema if self.tool is not None else None
        given = self.call.arguments
        known = self.run.secrets
        self._secrets = None
        if plain_arguments(given):  # JSON and storable as they are: a copy, redacted if the schema says so
            copy = dict(given)
            arguments: dict[str, Any] = redact(copy, schema)
            if arguments is not copy:  # the schema marks something secret: echoes in plain arguments go too
                arguments = self._echo_free(given, arguments)
            elif known is not None and known.forms:  # echoes of a secret the run knows, in any tool's call
                arguments = known.json(arguments)
                self._secrets = known
        else:
            try:
                jsonable = pydantic_core.to_jsonable_python(given, fallback=repr)
            except ValueError:  # nested too deeply for pydantic: `storable` cuts it off
                jsonable = given
            redacted = redact(jsonable, schema)
            if redacted is not jsonable:
                redacted = self._echo_free(jsonable, redacted)
            elif known is not None and known.forms:
                redacted = known.json(redacted)
                self._secrets = known
            arguments = storable(redacted)
        self._arguments = (self.call, arguments)
        return arguments

    def _echo_free(self, given: Any, redacted: Any) -> Any:
        """`redacted` (`given` redacted by its schema) with the values taken out, learned by the run, also
        taken out where a plain argument echoes them (a password copied into a note), as is every secret
        the run knew before; the run's values kept in `_secrets`."""
        known = self._secrets = self.run.known_secrets()
        known.learn(given, redacted)
        return known.json(redacted)


class Guard(Protocol):
    """A check a call must pass before its tool runs; returns a decision, never raises on model output.

    A guard may also define `applies(tool, policy) -> bool`, saying whether it could ever refuse a call to
    `tool` (`None`: a tool the toolset does not have) under `policy`; the executor asks once per tool and
    skips the guard where it cannot. A guard without `applies` checks every call to a known tool. One that
    never waits may also define `check_now(attempt) -> Decision | None`, which the executor calls instead
    (awaiting `check` only when it returns None): no coroutine per call.
    """

    async def check(self, attempt: Attempt) -> Decision: ...


def applies(guard: Guard, tool: Tool[..., Any] | None, policy: Policy) -> bool:
    """Whether `guard` must check calls to `tool` (see `Guard`)."""
    test = getattr(guard, "applies", None)
    if test is None:
        return tool is not None
    return bool(test(tool, policy))


def _column_text(value: str, limit: int) -> str:
    """A model's string for a journal column: storable, and within the column's length."""
    value = storable_text(value)
    return value if len(value) <= limit else value[: limit - 1] + "…"
