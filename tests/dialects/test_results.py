"""What a model reads of a tool result: `result_text` is the envelope's `model_dump_json(exclude_none=True)`,
byte for byte, however it is made (the serializer is called without pydantic's wrapper), and every dialect's
rendering is built from it."""

import json
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from tether import envelopes
from tether.dialects import _results, dialect_names, render_results, result_text, result_value
from tether.types import ErrorEnvelope, ErrorInfo, NeedsEnvelope, OkEnvelope, ToolResultMessage

ENVELOPES = {
    "ok scalar": envelopes.ok(5),
    "ok none": envelopes.ok(None),
    "ok validated": OkEnvelope(data={"a": [1, 2.5, None, True]}),
    "ok text": envelopes.ok('é "quoted" \\ / \n\t\x01\x1f \u2028 \U0001f600 </tool_response>'),
    "ok floats": envelopes.ok([1e16, 1.5e-7, -0.0, 3.0, 10**30]),
    "ok nested nulls": envelopes.ok({"keep": None, "deep": {"x": [None, {"y": None}]}}),
    "ok redacted": envelopes.ok({"token": "***", "user": "ann"}),
    "ok large": envelopes.ok(
        {"rows": [{"id": i, "name": f"row {i}"} for i in range(2000)], "blob": "x" * 200_000}
    ),
    "ok non-finite floats": envelopes.ok([float("nan"), float("inf"), -float("inf"), 1.0]),
    "ok python values": OkEnvelope(
        data={
            "when": datetime(2026, 11, 28, 9, 0, tzinfo=UTC),
            "raw": b"bytes",
            "pair": (1, "x"),
            "big": 2**70,
        }
    ),
    "ok a model inside": OkEnvelope(data={"info": ErrorInfo(code="X", message="m", recoverable=True)}),
    "ok empty": envelopes.ok({}),
    "ok false": envelopes.ok(False),
    "needs": envelopes.needs({"date": "Which day?", "city": True}),
    "error": envelopes.error("NOT_FOUND", "no such file: a.txt", recoverable=True),
    "error with details": envelopes.error(
        "INVALID_ARGS", "bad", recoverable=True, suggestion="Fix it.", details={"field": "x", "none": None}
    ),
    "error validated": ErrorEnvelope(error=ErrorInfo(code="INTERNAL", message="m", recoverable=False)),
    "needs validated": NeedsEnvelope(needs={"x": True}),
}


@pytest.mark.parametrize("name", list(ENVELOPES))
def test_result_text_is_the_envelopes_compact_json(name: str) -> None:
    envelope = ENVELOPES[name]
    expected = envelope.model_dump_json(exclude_none=True)
    assert result_text(envelope) == expected
    assert result_text(envelope) == expected  # the second time too (the serializer is then kept)
    assert json.loads(expected) == result_value(envelope)


def test_result_text_in_a_fresh_process_where_no_envelope_class_is_built_yet() -> None:
    """The envelope types defer building: the first result of each type builds it on the way."""
    code = (
        "from tether import envelopes\n"
        "from tether.dialects import result_text\n"
        "for e in (envelopes.ok({'a': None}), envelopes.needs({'x': True}),"
        " envelopes.error('X', 'm', recoverable=False)):\n"
        "    assert result_text(e) == e.model_dump_json(exclude_none=True), e\n"
        "    assert result_text(e) == e.model_dump_json(exclude_none=True), e\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr


class _NeverKept(dict[type[Any], Any]):
    """A serializer cache that keeps nothing: `result_text` then always takes `model_dump_json`."""

    def __setitem__(self, key: type[Any], value: Any) -> None:
        pass


@pytest.mark.parametrize("dialect", sorted(d for d in dialect_names() if not d.startswith("test_")))
def test_every_dialect_renders_results_as_with_model_dump_json(
    dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = [
        ToolResultMessage(call_id=f"c{i}", name="lookup", envelope=e)
        for i, e in enumerate(ENVELOPES.values())
    ]
    batches = ([results[0]], results[:3], results)
    fast = [render_results(dialect, batch) for batch in batches]
    monkeypatch.setattr(_results, "_SERIALIZERS", _NeverKept())
    assert fast == [render_results(dialect, batch) for batch in batches]


def test_hermes_renders_each_result_in_tool_response_tags_byte_for_byte() -> None:
    one = [ToolResultMessage(call_id="c0", name="add", envelope=envelopes.ok(5))]
    assert render_results("hermes", one) == '<tool_response>\n{"ok":true,"data":5}\n</tool_response>'
    two = [
        *one,
        ToolResultMessage(
            call_id="c1", name="add", envelope=envelopes.error("TIMEOUT", "slow", recoverable=True)
        ),
    ]
    assert render_results("hermes", two) == (
        '<tool_response>\n{"ok":true,"data":5}\n</tool_response>\n'
        '<tool_response>\n{"ok":false,"error":{"code":"TIMEOUT","message":"slow","recoverable":true}}\n'
        "</tool_response>"
    )
