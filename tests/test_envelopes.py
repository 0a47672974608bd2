"""tether.envelopes builds every envelope; nothing else in src/tether constructs one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tether
from tether import envelopes
from tether.exceptions import NeedsInput, ToolError
from tether.types import ErrorEnvelope, ErrorInfo, NeedsEnvelope, OkEnvelope

SRC = Path(tether.__file__).parent
ENVELOPE_TYPES = {"OkEnvelope", "NeedsEnvelope", "ErrorEnvelope", "ErrorInfo"}
BUILDERS = {"envelopes.py", "types.py"}


def constructions(tree: ast.Module) -> list[str]:
    """`OkEnvelope(...)`, `ErrorInfo(...)`, `ErrorEnvelope.model_validate(...)` and the like in `tree`."""
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr.startswith("model_"):
            function = function.value  # OkEnvelope.model_validate(...), .model_construct(...)
        if isinstance(function, ast.Attribute):
            function = ast.Name(function.attr)  # types.OkEnvelope(...)
        if isinstance(function, ast.Name) and function.id in ENVELOPE_TYPES:
            found.append(f"{function.id}@{node.lineno}")
    return found


def test_no_module_but_the_envelope_builder_constructs_an_envelope() -> None:
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC)
        if relative.as_posix() in BUILDERS:
            continue
        made = constructions(ast.parse(path.read_text(encoding="utf-8")))
        if made:
            found[relative.as_posix()] = made
    assert found == {}, "build envelopes with tether.envelopes"


def test_the_check_sees_direct_qualified_and_validating_constructions() -> None:
    source = (
        "OkEnvelope(data=1)\n"
        "types.ErrorInfo(code='X', message='m', recoverable=True)\n"
        "NeedsEnvelope.model_validate({})\n"
        "isinstance(x, ErrorEnvelope)\n"
    )
    assert constructions(ast.parse(source)) == ["OkEnvelope@1", "ErrorInfo@2", "NeedsEnvelope@3"]


def test_an_error_carries_code_message_recoverable_suggestion_and_details() -> None:
    envelope = envelopes.error(
        "NOT_FOUND", "no such file", recoverable=True, suggestion="ls", details={"p": 1}
    )
    assert envelope == ErrorEnvelope(
        error=ErrorInfo(
            code="NOT_FOUND", message="no such file", recoverable=True, suggestion="ls", details={"p": 1}
        )
    )
    assert envelope.model_dump(exclude_none=True) == {
        "ok": False,
        "error": {"code": "NOT_FOUND", "message": "no such file", "recoverable": True, "suggestion": "ls", "details": {"p": 1}},
    }  # fmt: skip


def test_ok_and_needs() -> None:
    assert envelopes.ok([1, 2]) == OkEnvelope(data=[1, 2])
    assert envelopes.needs({"date": True, "city": "Which city?"}) == NeedsEnvelope(
        needs={"date": True, "city": "Which city?"}
    )


@pytest.mark.parametrize("data", [None, 0, "x", [1, {"a": None}], {"k": 1.5}], ids=repr)
def test_ok_is_exactly_the_validated_envelope(data: object) -> None:
    built, validated = envelopes.ok(data), OkEnvelope(data=data)
    assert (type(built), built, built.model_fields_set) == (type(validated), validated, {"data"})
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert (built.__pydantic_extra__, built.__pydantic_private__) == (None, None)
    assert built.model_fields_set is not envelopes.ok(data).model_fields_set
    with pytest.raises(ValueError, match="frozen"):
        built.data = 1


def test_a_tool_error_without_a_suggestion_gets_its_codes_default() -> None:
    envelope = envelopes.from_signal(ToolError("NOT_FOUND", "no such file: a.txt"))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.suggestion == envelopes.DEFAULT_SUGGESTIONS["NOT_FOUND"]
    assert envelopes.from_signal(NeedsInput(duration=True)) == NeedsEnvelope(needs={"duration": True})


def test_a_signal_that_cannot_make_an_envelope_raises_value_error() -> None:
    signal = NeedsInput(missing=True)
    signal.needs = {"missing": ["date"]}  # pyright: ignore[reportAttributeAccessIssue] - what a careless tool does
    with pytest.raises(ValueError, match="needs"):
        envelopes.from_signal(signal)


def test_timeouts_say_whether_the_call_was_stopped_and_what_to_do() -> None:
    thread = envelopes.timed_out("slow", 0.5, "mutating", stopped=False).error
    assert thread.code == "TIMEOUT"
    assert (
        thread.message
        == "slow did not finish within 0.5 s and could not be stopped (a thread), so it may still be running."
    )
    assert thread.suggestion == envelopes.stopped_suggestion("mutating")
    assert thread.details == {"timeout_s": 0.5}
    run = envelopes.stopped("slow", None, "the run reached its time limit").error
    assert (run.code, run.recoverable) == ("TIMEOUT", True)
    assert run.message == "slow was stopped before it finished: the run reached its time limit."
    assert run.suggestion == envelopes.stopped_suggestion(None) != envelopes.stopped_suggestion("mutating")


def test_internal_errors_point_to_the_journal_and_advise_against_retrying() -> None:
    info = envelopes.internal("fs.read", "it raised OSError").error
    assert info.message == "fs.read failed: it raised OSError. The details are in the audit journal."
    assert (info.code, info.recoverable) == ("INTERNAL", False)


@pytest.mark.parametrize(
    "envelope",
    [envelopes.ok({"a": 1}), envelopes.needs({"x": True}), envelopes.error("X", "m", recoverable=False)],
)
def test_from_json_reads_back_what_an_envelope_dumps(
    envelope: OkEnvelope | NeedsEnvelope | ErrorEnvelope,
) -> None:
    assert envelopes.from_json(envelope.model_dump(mode="json")) == envelope


def unions_of_envelopes(tree: ast.Module) -> list[str]:
    """Names bound to a union of the three envelope types (`A = OkEnvelope | NeedsEnvelope | ErrorEnvelope`,
    `B: TypeAlias = Union[...]`) in `tree`."""
    wanted = {"OkEnvelope", "NeedsEnvelope", "ErrorEnvelope"}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            value, targets = node.value, node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            value, targets = node.value, [node.target]
        else:
            continue
        named = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        named |= {n.attr for n in ast.walk(value) if isinstance(n, ast.Attribute)}
        if wanted <= named:
            found += [ast.unparse(t) for t in targets]
    return found


def test_the_union_of_the_envelopes_is_defined_once() -> None:
    # regression: `AnyEnvelope` was defined twice (issue 13); every module imports tether.types.AnyEnvelope
    found = {
        path.relative_to(SRC).as_posix(): names
        for path in sorted(SRC.rglob("*.py"))
        if (names := unions_of_envelopes(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {"types.py": ["Envelope", "AnyEnvelope"]}  # the validating union, and the plain one


def test_the_union_check_sees_every_spelling() -> None:
    source = (
        "A = OkEnvelope | NeedsEnvelope | ErrorEnvelope\n"
        "B: TypeAlias = Union[types.OkEnvelope, types.NeedsEnvelope, types.ErrorEnvelope]\n"
        "D = OkEnvelope | ErrorEnvelope\n"
    )
    assert unions_of_envelopes(ast.parse(source)) == ["A", "B"]
