"""Real model outputs from ../shared/corpora, replayed by a fake upstream in pieces of varied size: the
official `openai` client receives exactly the calls tether reads from the whole text in one go (and those
the corpus expects, where it says), streamed or not, in every dialect below."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import openai
import pytest
from fastapi import FastAPI
from openai.types.chat import ChatCompletionMessageFunctionToolCall
from starlette.routing import Mount

from tether.dialects import parse
from tether.exceptions import UserError
from tether.serve import Upstream
from tether.serve._openai import openai_router as router

from .openai_fakes import FakeUpstream, free_socket, running, url_of

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
DIALECTS = ("hermes", "pythonic", "mistral", "qwen3_coder_xml", "glm45", "harmony")
PER_DIALECT = 8
SIZES = (1, 2, 3, 5, 8, 13, 21, 64)


def _tools(record: dict[str, Any], dialect: str) -> list[dict[str, Any]]:
    """The record's OpenAI tools, or (for BFCL docs or none) a bare tool per name the text calls."""
    tools: list[Any] = record.get("tools") or []
    if tools and all(
        isinstance(t, dict) and cast("dict[str, Any]", t).get("type") == "function" for t in tools
    ):
        return tools
    names = dict.fromkeys(c.name for c in parse(record["text"], dialect).calls)
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]


def _cases() -> list[Any]:
    if not CORPORA.is_dir():  # one case, which the `corpora_dir` fixture skips saying why (fails under CI)
        return [pytest.param("hermes", {}, [], None, id="no-corpora")]
    cases: list[Any] = []
    for dialect in DIALECTS:
        path = CORPORA / f"{dialect}.jsonl"
        chosen: list[Any] = []
        for line in path.read_text().splitlines():
            record = json.loads(line)
            try:
                tools = _tools(record, dialect)
                parsed = parse(record["text"], dialect, tools)
            except (
                UserError
            ):  # a peer's tool schema tether refuses (e.g. a name with spaces): not this test's
                continue
            if not parsed.calls or parsed.errors:
                continue
            expected = record.get("expected_calls")
            if record.get("expected_args_subset") or not expected:
                expected = None
            # prefer cases the corpus states calls for, and parallel ones
            rank = (expected is None, len(parsed.calls) < 2)
            if len(chosen) == 60:  # enough to choose from (the pythonic file holds thousands)
                break
            chosen.append(
                (
                    rank,
                    pytest.param(dialect, record, tools, expected, id=f"{dialect}-{record['source'][-40:]}"),
                )
            )
        chosen.sort(key=lambda c: c[0])
        cases.extend(p for _, p in chosen[:PER_DIALECT])
    return cases


def _pieces(text: str, seed: str) -> list[str]:
    rng, out, i = random.Random(seed), list[str](), 0
    while i < len(text):
        n = rng.choice(SIZES)
        out.append(text[i : i + n])
        i += n
    return out


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[FakeUpstream, openai.OpenAI]]:
    fake, sock = FakeUpstream(), free_socket()
    upstreams = {d: Upstream(base_url=f"{url_of(sock)}/up/v1", model=d, dialect=d) for d in DIALECTS}
    app = FastAPI()
    app.include_router(router(upstreams))
    app.router.routes.append(Mount("/up", fake.app()))
    with running(app, sock):
        yield fake, openai.OpenAI(base_url=f"{url_of(sock)}/v1", api_key="unused", max_retries=0, timeout=20)


@pytest.mark.parametrize(("dialect", "record", "tools", "expected"), _cases())
def test_the_client_receives_exactly_the_calls_in_the_models_text(
    corpora_dir: Path,
    upstream: tuple[FakeUpstream, openai.OpenAI],
    dialect: str,
    record: dict[str, Any],
    tools: Any,
    expected: list[dict[str, Any]] | None,
) -> None:
    fake, client = upstream
    one_shot = parse(record["text"], dialect, tools)
    wanted = [{"name": c.name, "arguments": c.arguments} for c in one_shot.calls]
    if expected is not None:
        assert wanted == expected  # tether's own reading agrees with the corpus
    fake.pieces = _pieces(record["text"], record["source"])
    ask: Any = [{"role": "user", "content": "go"}]

    completion = client.chat.completions.create(model=dialect, messages=ask, tools=tools)
    calls = [
        c
        for c in completion.choices[0].message.tool_calls or []
        if isinstance(c, ChatCompletionMessageFunctionToolCall)
    ]
    assert [{"name": c.function.name, "arguments": json.loads(c.function.arguments)} for c in calls] == wanted
    assert completion.choices[0].finish_reason == "tool_calls"
    assert (completion.choices[0].message.content or "") == one_shot.content

    streamed: dict[int, dict[str, Any]] = {}
    content = ""
    for chunk in client.chat.completions.create(model=dialect, messages=ask, tools=tools, stream=True):
        delta = chunk.choices[0].delta
        content += delta.content or ""
        for d in delta.tool_calls or []:
            assert d.function is not None
            entry = streamed.setdefault(d.index, {"name": d.function.name, "arguments": ""})
            entry["arguments"] += d.function.arguments or ""
    assert [{"name": c["name"], "arguments": json.loads(c["arguments"])} for c in streamed.values()] == wanted
    assert content == one_shot.content
