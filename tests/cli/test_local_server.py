"""`tether run` against a local OpenAI-compatible server (as Ollama, vLLM or llama.cpp serve), over real HTTP.

The server is a stand-in that streams recorded-shape Chat Completions chunks; the CLI, the OpenAI SDK, the
dialect parser, the executor and the tool all run for real, with no API key.
"""

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tether.cli import app

WEATHER_TOOL = str(Path(__file__).resolve().parents[2] / "examples" / "weather" / "weather.py")
runner = CliRunner()


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip


def native_turn(seen: int) -> list[dict[str, Any]]:
    if seen == 0:
        call = {"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}  # fmt: skip
        return [chunk({"role": "assistant", "tool_calls": [call]}), chunk({}, "tool_calls")]
    return [
        chunk({"role": "assistant", "content": "Sunny in Oslo, "}),
        chunk({"content": "21 C."}),
        chunk({}, "stop"),
    ]


def hermes_turn(seen: int) -> list[dict[str, Any]]:
    if seen == 0:
        text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
        return [
            chunk({"role": "assistant", "content": text[:30]}),
            chunk({"content": text[30:]}),
            chunk({}, "stop"),
        ]
    return [chunk({"role": "assistant", "content": "Sunny in Oslo, 21 C."}), chunk({}, "stop")]


class Server:
    """A local Chat Completions endpoint answering each request with the next scripted turn, as SSE."""

    def __init__(self, turn: Callable[[int], Any], content_type: str = "text/event-stream"):
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                chunks = turn(len(outer.requests))
                outer.requests.append(body)
                payload = (
                    chunks  # a raw answer, as it is
                    if isinstance(chunks, str)
                    else "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                )
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload.encode())))
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "Server":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TETHER_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_native_tool_calls_against_a_local_server_with_no_key() -> None:
    with Server(native_turn) as server:
        args = [
            "run",
            "Weather in Oslo?",
            "--model",
            "openai:local",
            "--base-url",
            server.url,
            "--tools",
            WEATHER_TOOL,
        ]
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "→ get_weather" in result.output
    assert result.output.endswith("\nSunny in Oslo, 21 C.\ndone (no_calls)\n")  # the answer, once
    first, second = server.requests
    assert first["stream"] is True
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert json.loads(second["messages"][-1]["content"]) == {"ok": True, "data": {"high": 21.0, "low": 14.0}}


def test_a_text_dialect_against_a_local_server_reads_calls_from_the_streamed_text() -> None:
    with Server(hermes_turn) as server:
        args = ["run", "Weather in Oslo?", "--model", "openai:local", "--base-url", server.url,
                "--tools", WEATHER_TOOL, "--dialect", "hermes"]  # fmt: skip
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output.endswith("\nSunny in Oslo, 21 C.\ndone (no_calls)\n")
    first, second = server.requests
    assert "tools" not in first  # taught in the system prompt instead
    assert "<tool_call>" in first["messages"][0]["content"]
    feedback = second["messages"][-1]["content"]  # the result, in hermes' own feedback format
    assert feedback == '<tool_response>\n{"ok":true,"data":{"high":21.0,"low":14.0}}\n</tool_response>'


def run_against(server: Server) -> Any:
    return runner.invoke(app, ["run", "Weather?", "--model", "openai:local", "--base-url", server.url])


def test_a_web_page_instead_of_a_model_is_an_error_not_an_empty_answer() -> None:
    with Server(lambda seen: "<html><body>It works!</body></html>", "text/html") as server:
        result = run_against(server)
    assert result.exit_code == 1
    assert result.output == (
        f"error: openai:local at {server.url}/: the server's answer (text/html) held no Chat Completions "
        "events; is the base URL the API's (it usually ends in /v1)?\n"
    )


def test_a_stream_event_that_is_not_json_is_one_line() -> None:
    broken = (
        'data: {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "hi"\n\ndata: [DONE]\n\n'
    )
    with Server(lambda seen: broken) as server:
        result = run_against(server)
    assert result.exit_code == 1
    assert result.output.startswith(
        f"error: openai:local at {server.url}/: the server streamed an event that is not JSON (Expecting"
    )
    assert result.output.count("\n") == 1
