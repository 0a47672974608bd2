"""The core tools: send_chat, say (espeak-ng when installed), open_url, end_turn, finalResponse."""

import json
import shutil
import wave
from pathlib import Path

import pytest

from tether.loop import Agent, EndTurn, core_tools
from tether.models import ScriptedModel
from tether.types import ErrorEnvelope, SpeechEvent, ToolResultMessage

pytestmark = pytest.mark.anyio


def test_core_tools_are_side_effect_free_and_described() -> None:
    toolset = core_tools()
    assert toolset.names() == ["send_chat", "say", "open_url", "end_turn", "finalResponse"]
    assert all(t.spec.side_effects == "none" and t.spec.description for t in toolset)


@pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="espeak-ng is not installed (.ci/run installs it)"
)
async def test_say_speaks_with_espeak_ng_into_a_wav_file() -> None:
    turn = '{"toolCalls": [{"type": "say", "id": "v1", "operation": "speak", "parameters": {"utterance": "Hello"}}, {"type": "end_turn", "id": "e", "operation": "end", "parameters": {}}]}'
    result = await Agent(ScriptedModel([turn]), dialect="json_calls", termination=EndTurn()).run("hi")
    (speech,) = [e for e in result.events if isinstance(e, SpeechEvent)]
    assert speech.audio is not None
    with wave.open(speech.audio) as audio:
        assert audio.getnframes() / audio.getframerate() > 0.2  # a real utterance, not an empty file
    Path(speech.audio).unlink()


async def test_open_url_refuses_anything_but_http_urls() -> None:
    turn = '{"toolCalls": [{"type": "open_url", "id": "u1", "operation": "open", "parameters": {"url": "file:///etc/passwd"}}]}'
    done = '{"toolCalls": [{"type": "end_turn", "id": "e", "operation": "end", "parameters": {}}]}'
    result = await Agent(ScriptedModel([turn, done]), dialect="json_calls", termination=EndTurn()).run("x")
    refusal = next(
        m.envelope for m in result.messages if isinstance(m, ToolResultMessage) and m.name == "open_url"
    )
    assert isinstance(refusal, ErrorEnvelope)
    assert refusal.error.code == "INVALID_ARGS"
    assert not any(e.event == "open_url" for e in result.events)


async def speak(**parameters: str) -> SpeechEvent:
    turn = json.dumps(
        {
            "toolCalls": [
                {"type": "say", "id": "v1", "operation": "speak", "parameters": parameters},
                {"type": "end_turn", "id": "e", "operation": "end", "parameters": {}},
            ]
        }
    )
    result = await Agent(ScriptedModel([turn]), dialect="json_calls", termination=EndTurn()).run("hi")
    (speech,) = [e for e in result.events if isinstance(e, SpeechEvent)]
    return speech


def seconds(speech: SpeechEvent) -> float:
    assert speech.audio is not None
    with wave.open(speech.audio) as audio:
        length = audio.getnframes() / audio.getframerate()
    Path(speech.audio).unlink()
    return length


def frames(speech: SpeechEvent) -> bytes:
    assert speech.audio is not None
    with wave.open(speech.audio) as audio:
        data = audio.readframes(audio.getnframes())
    Path(speech.audio).unlink()
    return data


@pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="espeak-ng is not installed (.ci/run installs it)"
)
async def test_say_honours_style_and_voice_where_espeak_ng_can() -> None:
    line = "The meeting with Aviad is confirmed for tomorrow at noon."
    slow, fast = (
        seconds(await speak(utterance=line, style="slow")),
        seconds(await speak(utterance=line, style="fast")),
    )
    assert slow > fast * 1.5
    plain = frames(await speak(utterance=line))
    assert frames(await speak(utterance=line, voiceId="en-us+f3")) != plain
    assert frames(await speak(utterance=line, style="whisper")) != plain
    # a voice espeak-ng does not have is spoken in its default voice, not dropped
    assert frames(await speak(utterance=line, voiceId="nosuchvoice")) == plain


async def test_say_refuses_a_voice_id_that_is_not_a_voice_name() -> None:
    turn = '{"toolCalls": [{"type": "say", "id": "v1", "operation": "speak", "parameters": {"utterance": "hi", "voiceId": "../../etc/passwd"}}]}'
    done = '{"toolCalls": [{"type": "end_turn", "id": "e", "operation": "end", "parameters": {}}]}'
    result = await Agent(ScriptedModel([turn, done]), dialect="json_calls", termination=EndTurn()).run("x")
    refusal = next(
        m.envelope for m in result.messages if isinstance(m, ToolResultMessage) and m.name == "say"
    )
    assert isinstance(refusal, ErrorEnvelope)
    assert refusal.error.code == "INVALID_ARGS"
    assert not any(e.event == "speech" for e in result.events)
