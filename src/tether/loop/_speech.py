"""Text to speech for `say`: espeak-ng when it is installed, else the utterance is only an event.

`voiceId` names an espeak-ng voice, with a variant if wanted (`en-us`, `en-us+f3`); `style` is one of
`STYLES`, read as espeak-ng's rate, pitch and variant. A voice espeak-ng does not have falls back to its
default voice rather than to silence.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import anyio

__all__ = ["STYLES", "has_engine", "synthesize", "valid_voice"]

STYLES: dict[str, tuple[str, ...]] = {
    "neutral": (),
    "cheerful": ("-s", "185", "-p", "65"),
    "excited": ("-s", "205", "-p", "75"),
    "calm": ("-s", "145", "-p", "40"),
    "sad": ("-s", "130", "-p", "30"),
    "serious": ("-s", "160", "-p", "35"),
    "slow": (
        "-s",
        "120",
    ),
    "fast": (
        "-s",
        "230",
    ),
    "whisper": ("+whisper",),
}
"""Speaking styles espeak-ng can render: its options, or a `+variant` for the voice."""

_VOICE = re.compile(r"[A-Za-z0-9_-]{1,40}(?:\+[A-Za-z0-9_-]{1,40})?")


def has_engine() -> bool:
    """Whether espeak-ng is installed, i.e. whether `say` is heard and not only shown."""
    return shutil.which("espeak-ng") is not None


def valid_voice(voice: str) -> bool:
    """Whether `voice` is written as an espeak-ng voice name (`en-us`, `en-us+f3`): never a path or option."""
    return _VOICE.fullmatch(voice) is not None


async def synthesize(utterance: str, voice: str | None = None, style: str | None = None) -> Path | None:
    """A WAV file of `utterance` spoken by espeak-ng, or None when espeak-ng is not installed or fails."""
    engine = shutil.which("espeak-ng")
    if engine is None:
        return None
    options = STYLES.get((style or "").lower(), ())
    variant = next((o for o in options if o.startswith("+")), "")
    options = tuple(o for o in options if not o.startswith("+"))
    chosen = voice if voice and valid_voice(voice) else None
    if variant and (chosen is None or "+" not in chosen):
        chosen = (chosen or "en") + variant
    fd, name = tempfile.mkstemp(prefix="tether-say-", suffix=".wav")
    os.close(fd)
    for attempt in dict.fromkeys((chosen, None)):  # a voice espeak-ng does not have: its default voice
        command = [engine, "-w", name, *(["-v", attempt] if attempt else []), *options, "--", utterance]
        result = await anyio.run_process(command, check=False)
        if result.returncode == 0:
            return Path(name)
    Path(name).unlink(missing_ok=True)
    return None
