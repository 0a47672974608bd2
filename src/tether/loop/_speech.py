"""Text to speech for `say`: espeak-ng when it is installed, else the utterance is only an event.

`voiceId` names an espeak-ng voice, with a variant if wanted (`en-us`, `en-us+f3`); `style` is one of
`STYLES`, read as espeak-ng's rate, pitch and variant. A voice espeak-ng does not have falls back to its
default voice rather than to silence.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from pathlib import Path

import anyio

from tether.loop._events import Events
from tether.types import SpeechEvent, ToolCall

__all__ = ["STYLES", "Speaker", "has_engine", "synthesize", "valid_voice"]

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


class Speaker:
    """One run's `say` calls, spoken alongside the run in the order the model said them (calls run
    concurrently and finish in any order), one speech engine at a time; the model's next turn never waits."""

    def __init__(self, events: Events):
        self.events = events
        self.speaking: list[asyncio.Task[None]] = []
        """Utterances being spoken: they run alongside the model's next turns and end before the run does."""
        self.said: dict[str, asyncio.Future[bool]] = {}
        """`say` calls given their place, by call id, until their envelope says whether to speak."""

    def book(self, call: ToolCall) -> None:
        """Give a `say` call its place among the run's utterances (before it starts)."""
        stale = self.said.get(call.id)
        if stale is not None and not stale.done():  # a call of a model turn that failed part way
            stale.set_result(False)
        self.said[call.id] = self._queue(call)

    def answered(self, call: ToolCall, ok: bool) -> None:
        """The call's envelope is in: spoken if it is ok (a call never booked takes its place now)."""
        place = self.said.pop(call.id, None) or self._queue(call)
        place.set_result(ok)

    async def finish(self) -> None:
        """Wait for every utterance; calls a failure or a limit stopped before they finished are not spoken."""
        if not self.speaking:
            return
        for place in self.said.values():
            if not place.done():
                place.set_result(False)
        self.said.clear()
        await asyncio.gather(*self.speaking)

    def cancel(self) -> None:
        """The run did not end normally: speech still going is not wanted."""
        for task in self.speaking:
            task.cancel()

    def _queue(self, call: ToolCall) -> asyncio.Future[bool]:
        place: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        before = self.speaking[-1] if self.speaking else None
        self.speaking.append(asyncio.create_task(self._speak(call, place, before)))
        return place

    async def _speak(
        self, call: ToolCall, place: asyncio.Future[bool], before: asyncio.Task[None] | None
    ) -> None:
        """One utterance, after those said before it."""
        spoken = await place
        if before is not None:
            await asyncio.wait([before])  # its failure is its own
        if not spoken:
            return
        args = call.arguments
        utterance = str(args.get("utterance", ""))
        voice, style = args.get("voiceId"), args.get("style")
        audio = await synthesize(utterance, voice, style)
        spoken = SpeechEvent(
            run_id=self.events.run_id,
            utterance=utterance,
            voice_id=voice,
            style=style,
            audio=None if audio is None else str(audio),
        )
        if (pending := self.events.emit(spoken)) is not None:
            await pending
