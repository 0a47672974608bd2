"""The core tools every agent can offer: `send_chat`, `say`, `open_url`, `end_turn` (seed 000) and
`finalResponse` (seed 003). The loop turns their successful calls into chat, speech and open-url events
and into the end of a turn; the functions themselves only check and echo their arguments (`say` is spoken by
the loop alongside the run, so that speech never delays the model's next turn)."""

from __future__ import annotations

from urllib.parse import urlparse

from tether.exceptions import ToolError, UserError
from tether.loop._speech import STYLES, has_engine, valid_voice
from tether.tools import Toolset, tool

__all__ = ["CORE_TOOL_NAMES", "core_tools"]


@tool(name="send_chat", side_effects="none", category="core", inline=True)
def send_chat(content: str) -> dict[str, str]:
    """Show a message in the user's chat window now. Does not end your turn; call it as often as useful.

    Args:
        content: The message, in Markdown.
    """
    return {"status": "shown"}


@tool(name="say", side_effects="none", category="core")
def say(utterance: str, voiceId: str | None = None, style: str | None = None) -> dict[str, str]:
    """Speak a short utterance aloud (text to speech). Non-blocking; does not end your turn.

    Args:
        utterance: What to say.
        voiceId: A voice to use, if the user chose one (an espeak-ng voice such as "en-us" or "en-us+f3").
        style: A speaking style: neutral, cheerful, excited, calm, sad, serious, slow, fast or whisper.
    """
    if voiceId is not None and not valid_voice(voiceId):
        raise ToolError(
            "INVALID_ARGS",
            f"not a voice name: {voiceId!r}",
            suggestion='Give an espeak-ng voice such as "en-us" or "en-us+f3", or leave voiceId out.',
        )
    answer = {"status": "speaking" if has_engine() else "shown as text (no speech engine installed)"}
    if style is not None and style.lower() not in STYLES:
        answer["style"] = f"{style!r} is not a style this speech engine has; spoken plainly"
    return answer


@tool(name="open_url", side_effects="none", category="core", inline=True)
def open_url(url: str) -> dict[str, str]:
    """Open a web page in a new tab for the user. Does not end your turn.

    Args:
        url: An http or https URL.
    """
    if urlparse(url).scheme not in ("http", "https"):
        raise ToolError(
            "INVALID_ARGS", f"not an http(s) URL: {url!r}", suggestion="Give a full https:// URL."
        )
    return {"status": "opened"}


@tool(name="end_turn", side_effects="none", category="core", inline=True)
def end_turn() -> dict[str, str]:
    """End your turn and hand control back to the user. This is the only way to finish."""
    return {"status": "turn ended"}


@tool(name="finalResponse", side_effects="none", category="core", inline=True)
def final_response() -> dict[str, str]:
    """Call when you have everything you need; you will then be told the exact format of the final answer."""
    return {"status": "format requirements follow"}


CORE_TOOL_NAMES = frozenset({"send_chat", "say", "open_url", "end_turn", "finalResponse"})


def core_tools(*names: str) -> Toolset:
    """The named core tools (all when none are named).

    Raises:
        UserError: A name is not one of the core tools (e.g. in a `Termination`'s `core_tools`).
    """
    every = {t.name: t for t in (send_chat, say, open_url, end_turn, final_response)}
    unknown = [n for n in names if n not in every]
    if unknown:
        raise UserError(
            f"{', '.join(map(repr, unknown))}: not a core tool of the loop; the core tools are "
            f"{', '.join(sorted(every))}. A termination policy's `core_tools` names only those (its own tools go "
            "to Agent(tools=...))."
        )
    return Toolset(*(every[n] for n in (names or every)))
