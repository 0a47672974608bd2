"""Exceptions, grouped by who must act on them.

    TetherError                 base of everything tether raises
    ├── UserError               a developer misused tether; the message names the fix
    ├── ToolSignal              raised by a tool to answer the model with an envelope instead of data
    │   ├── ToolError           -> {ok: false, error: {code, message, recoverable, suggestion}}
    │   └── NeedsInput          -> {ok: false, needs: {...}}
    └── TetherRuntimeError      anything else that went wrong inside tether at run time
        ├── ModelError          the model's provider failed (network, key, rate limit, server error)
        ├── ToolCrashed         a tool run in another process (isolated, sandboxed) raised or died
        └── SandboxUnavailable  bubblewrap is missing or cannot create namespaces on this host

Model output never raises: parsers and the executor turn bad output into errors and envelopes the model
can act on. Exceptions are for developers' mistakes and for tools that want to refuse.
"""

from __future__ import annotations

__all__ = [
    "ModelError",
    "NeedsInput",
    "SandboxUnavailable",
    "TetherError",
    "TetherRuntimeError",
    "ToolCrashed",
    "ToolError",
    "ToolSignal",
    "UserError",
]


class TetherError(Exception):
    """Base class of every exception tether raises."""


class UserError(TetherError):
    """A developer used tether in a way it does not support; the message says how to fix it."""


class TetherRuntimeError(TetherError):
    """Something went wrong inside tether at run time that is neither misuse nor a tool's answer."""


class ModelError(TetherRuntimeError):
    """The model's provider failed: unreachable, a refused key, a rate limit, a server error. The message names
    the model and the provider's own error, which is kept as `__cause__`."""


class ToolCrashed(TetherRuntimeError):
    """A tool run in another process (process-isolated, or sandboxed) raised, or its process died.

    `type_name` names what it raised (the exception's class cannot cross the process boundary) and
    `traceback` is the child's, for the journal; the model is told only the type.
    """

    def __init__(self, type_name: str, traceback: str):
        super().__init__(type_name)
        self.type_name = type_name
        self.traceback = traceback


class SandboxUnavailable(TetherRuntimeError):
    """bubblewrap is missing or cannot create namespaces here, and the caller did not opt out (the message
    names the fix, e.g. `apt-get install bubblewrap`). Raised by `tether.sandbox`; tools that run code in
    the sandbox answer the model with an envelope instead."""


class ToolSignal(TetherError):
    """Raised inside a tool to answer the model with an envelope rather than data."""


class ToolError(ToolSignal):
    """A typed failure a tool reports to the model, e.g. `ToolError("NOT_FOUND", "no such file: a.txt")`."""

    def __init__(self, code: str, message: str, *, recoverable: bool = True, suggestion: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.recoverable = recoverable
        self.suggestion = suggestion


class NeedsInput(ToolSignal):
    """Information is missing that the model should ask the user for, e.g. `NeedsInput(duration=True)`."""

    def __init__(self, **needs: bool | str):
        if not needs:
            raise UserError("NeedsInput() needs at least one field, e.g. NeedsInput(duration=True).")
        super().__init__(", ".join(needs))
        self.needs = needs
