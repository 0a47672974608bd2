"""`SecretText`: a secret's echoes, found as text wherever they are, and in text that comes in chunks."""

import json

import pytest

from tether.tools import REDACTED, SecretText, redact

SCHEMA = {
    "type": "object",
    "properties": {
        "password": {"type": "string", "format": "password"},
        "pin": {"type": "integer", "x-secret": True},
        "keys": {"type": "array", "items": {"x-secret": True}},
        "note": {"type": "string"},
    },
}


def test_it_learns_what_redact_took_out_and_finds_every_echo() -> None:
    given = {"password": 'pä"ss-Word-1', "pin": 4821, "keys": [{"k": "AKIA-12345678"}], "note": "n"}
    known = SecretText()
    assert not known
    known.learn(given, redact(given, SCHEMA))
    assert known
    assert known.values == {'pä"ss-Word-1', "4821", "AKIA-12345678"}
    echoes = {
        "plain": 'pä"ss-Word-1',
        "json": json.dumps('pä"ss-Word-1'),
        "ascii": json.dumps('x pä"ss-Word-1 y'),
        "html": "<b>pä&quot;ss-Word-1</b>",
        'key pä"ss-Word-1': [4821, 48215, "pin 4821", "14821", "AKIA-12345678/x"],
    }
    assert known.json(echoes) == {
        "plain": REDACTED,
        "json": f'"{REDACTED}"',
        "ascii": f'"x {REDACTED} y"',
        "html": f"<b>{REDACTED}</b>",
        f"key {REDACTED}": [REDACTED, 48215, f"pin {REDACTED}", "14821", f"{REDACTED}/x"],
    }
    assert known.json(echoes, keys=False)['key pä"ss-Word-1'][0] == REDACTED


def test_blank_values_and_the_marker_itself_are_never_secrets() -> None:
    known = SecretText(["", "  ", REDACTED])
    assert not known
    assert known.text("a *** b") == "a *** b"


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_streamed_text_holds_back_what_could_start_a_secret(size: int) -> None:
    known = SecretText(["Zq9Kx7-correct-horse", "4821"])
    text = "pw Zq9Kx7-correct-horse, Zq9 is not, pin 4821 not 48215 nor x4821; 4821"
    shown: list[str] = []
    held, before = "", ""
    for start in range(0, len(text), size):
        out, held = known.streamed(held + text[start : start + size], before)
        shown.append(out)
        before = (before + out)[-1:]
    shown.append(known.ended(held, before))
    assert not any("Zq9K" in piece for piece in shown)
    assert "".join(shown) == f"pw {REDACTED}, Zq9 is not, pin {REDACTED} not 48215 nor x4821; {REDACTED}"


def test_text_without_a_known_secret_streams_as_it_comes() -> None:
    assert SecretText().streamed("Zq9K") == ("Zq9K", "")
