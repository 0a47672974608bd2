"""The corpus runner behind `tether corpus`: how well each dialect reads the shared corpora of real and peer-tested model output.

Per corpus file it counts the cases, those with a full expectation, exact call matches (name and
arguments; a subset where `expected_args_subset`), content matches where `expected_content` is given, and
the same fed as a stream (`stream_chunks` where given, else splits every 1, 3 and 7 characters), where a
stream case passes when every split gives a result equal to the one-shot parse and matching the
expectation. Cases judged mislabeled are excluded by `(file, line)` with a reason, never silently; an
exclusion may concern only the content expectation (`content_only`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from tether._literals import loads
from tether.dialects import ParseResult, dialect_names, parse, stream_parser
from tether.exceptions import UserError

__all__ = ["CaseFailure", "FileReport", "corpus_files", "load_exclusions", "run_file"]

_JSON_FILES = {"json_repair", "partial_json"}
_NATIVE_FILES = {"openai_json_arguments": "openai"}


@dataclass(slots=True)
class CaseFailure:
    line: int
    what: str
    text: str
    detail: str = ""


@dataclass(slots=True)
class FileReport:
    """Pass counts for one corpus file."""

    file: str
    dialect: str | None
    cases: int = 0
    labeled: int = 0
    exact: int = 0
    content_cases: int = 0
    content_ok: int = 0
    stream_ok: int = 0
    excluded: int = 0
    failures: list[CaseFailure] = field(default_factory=list[CaseFailure])

    @property
    def exact_rate(self) -> float:
        return self.exact / self.labeled if self.labeled else 1.0

    @property
    def passed(self) -> bool:
        return (
            self.exact == self.labeled
            and self.content_ok == self.content_cases
            and self.stream_ok == self.labeled
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "dialect": self.dialect,
            "cases": self.cases,
            "labeled": self.labeled,
            "exact": self.exact,
            "content": f"{self.content_ok}/{self.content_cases}",
            "stream": self.stream_ok,
            "excluded": self.excluded,
        }


def corpus_files(corpora: Path) -> list[Path]:
    return sorted(corpora.glob("*.jsonl"))


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The file's cases by line number.

    Raises:
        UserError: a line is not a corpus case (a JSON object with a `text` string).
    """
    with path.open(encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise UserError(f"{path}:{n} is not a corpus case: not JSON ({e}).") from e
            if not isinstance(row, dict) or not isinstance(cast("dict[str, Any]", row).get("text"), str):
                raise UserError(f"{path}:{n} is not a corpus case: a JSON object with a `text` string.")
            yield n, cast("dict[str, Any]", row)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict) and isinstance(b, dict):
        da, db = cast("dict[str, Any]", a), cast("dict[str, Any]", b)
        return da.keys() == db.keys() and all(_same(da[k], db[k]) for k in da)
    if isinstance(a, list) and isinstance(b, list):
        la, lb = cast("list[Any]", a), cast("list[Any]", b)
        return len(la) == len(lb) and all(_same(x, y) for x, y in zip(la, lb, strict=True))
    return bool(a == b)


def calls_match(result: ParseResult, expected: Sequence[Mapping[str, Any]], subset: bool) -> bool:
    """Whether the parsed calls are the expected ones (names and arguments, in order)."""
    if len(result.calls) != len(expected):
        return False
    for got, want in zip(result.calls, expected, strict=True):
        if got.name != want.get("name"):
            return False
        args = cast("dict[str, Any]", want.get("arguments") or {})
        if subset:
            if any(k not in got.arguments or not _same(got.arguments[k], v) for k, v in args.items()):
                return False
        elif not _same(got.arguments, args):
            return False
    return True


def _splits(text: str, row: Mapping[str, Any]) -> list[list[str]]:
    chunks = row.get("stream_chunks")
    if chunks and "".join(chunks) == text:
        return [list(chunks)]
    return [[text[i : i + n] for i in range(0, len(text), n)] for n in (1, 3, 7)]


def _native_message(dialect: str, row: Mapping[str, Any]) -> tuple[str, list[str]]:
    """An OpenAI message carrying the row's arguments string, and the same as streamed chunks."""
    name = row["meta"]["function_name"]
    args: str = row["text"]
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": name, "arguments": args}}],
    }
    head = {
        "choices": [
            {
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_0",
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            }
        ]
    }
    chunks = [json.dumps(head) + "\n"]
    for i in range(0, len(args), 3):
        piece = {
            "choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": args[i : i + 3]}}]}}]
        }
        chunks.append(json.dumps(piece) + "\n")
    return json.dumps(message), chunks


def run_file(
    path: Path,
    *,
    exclusions: Mapping[tuple[str, int], str] | None = None,
    content_only: frozenset[tuple[str, int]] = frozenset(),
    stream: bool = True,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> FileReport:
    """Run every case of one corpus file through its dialect."""
    stem = path.stem
    exclusions = exclusions or {}
    if stem in _JSON_FILES:
        return _run_json_file(path, exclusions)
    dialect = _NATIVE_FILES.get(stem, stem)
    report = FileReport(path.name, dialect if dialect in dialect_names() else None)
    for n, row in _rows(path):
        if limit is not None and report.cases >= limit:
            break
        report.cases += 1
        if progress:
            progress(n)
        if report.dialect is None:
            continue
        key = (path.name, n)
        if key in exclusions and key not in content_only:
            report.excluded += 1
            continue
        tools = row.get("tools")
        if stem in _NATIVE_FILES:
            text, chunk_lists = _native_message(dialect, row)
            splits = [chunk_lists]
        else:
            text = row["text"]
            splits = _splits(text, row)
        result = parse(text, dialect, tools)
        expected = row.get("expected_calls")
        if key in exclusions:
            report.excluded += 1
        elif "expected_content" in row:
            report.content_cases += 1
            if result.content.strip() == str(row["expected_content"]).strip():
                report.content_ok += 1
            else:
                report.failures.append(CaseFailure(n, "content", text, repr(result.content)))
        if expected is None:
            continue
        report.labeled += 1
        ok = calls_match(result, expected, bool(row.get("expected_args_subset")))
        if ok:
            report.exact += 1
        else:
            got = [(c.name, c.arguments) for c in result.calls]
            detail = f"got {got} errors {[e.message for e in result.errors]}"
            report.failures.append(CaseFailure(n, "calls", text, detail))
        if not stream:
            continue
        stream_ok = ok
        for chunks in splits:
            p = stream_parser(dialect, tools)
            for c in chunks:
                p.feed(c)
            p.close()
            if p.result != result:
                stream_ok = False
                report.failures.append(CaseFailure(n, "stream", text, f"split {len(chunks)}: {p.result!r}"))
                break
        if stream_ok:
            report.stream_ok += 1
    return report


def _run_json_file(path: Path, exclusions: Mapping[tuple[str, int], str]) -> FileReport:
    """json_repair / partial_json: our lenient reader against those libraries' own expectations.

    A row is labeled by `expected_value` or `expected_json_text`. Rows with only `expected_error` test
    those libraries' strict, schema and Allow options, which `tether._literals` does not have (it never
    raises and reads what it can): they are counted as cases, not labeled.
    """
    report = FileReport(path.name, "json")
    for n, row in _rows(path):
        report.cases += 1
        if (path.name, n) in exclusions:
            report.excluded += 1
            continue
        text = row["text"]
        got = loads(text)
        if "expected_value" in row:
            want, has = row["expected_value"], True
        elif "expected_json_text" in row:
            w = loads(row["expected_json_text"])
            want, has = w.value, w.ok
        else:
            want, has = None, False
        if not has:
            continue
        report.labeled += 1
        if got.ok and _same(got.value, want):
            report.exact += 1
            report.stream_ok += 1
        else:
            report.failures.append(CaseFailure(n, "value", text, f"got {got.value!r} ({got.error})"))
    return report


def load_exclusions(path: Path) -> tuple[dict[tuple[str, int], str], frozenset[tuple[str, int]]]:
    """Read a mislabeled-cases file: `[{file, line, reason, check?}]` (`check: "content"` limits it)."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    exclusions = {(r["file"], r["line"]): r["reason"] for r in rows}
    content_only = frozenset((r["file"], r["line"]) for r in rows if r.get("check") == "content")
    return exclusions, content_only
