"""Text to speech for `say`: espeak-ng when it is installed, else the utterance is only an event."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import anyio

__all__ = ["synthesize"]


async def synthesize(utterance: str, voice: str | None = None) -> Path | None:
    """A WAV file of `utterance` spoken by espeak-ng, or None when espeak-ng is not installed."""
    engine = shutil.which("espeak-ng")
    if engine is None:
        return None
    fd, name = tempfile.mkstemp(prefix="tether-say-", suffix=".wav")
    os.close(fd)
    command = [engine, "-w", name, *(["-v", voice] if voice else []), "--", utterance]
    result = await anyio.run_process(command, check=False)
    if result.returncode != 0:
        Path(name).unlink(missing_ok=True)
        return None
    return Path(name)
