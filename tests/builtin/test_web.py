"""wget and api_call against an HTTP server this test starts on 127.0.0.1 (never anything else)."""

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tether.builtin.web import web_pack
from tether.execution import Executor
from tether.types import OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

WHY = "Fetch the release notes to answer the user's question"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(1.5)
        if self.path == "/redirect-out":
            self.send_response(302)
            port = self.headers["Host"].rsplit(":", 1)[1]
            self.send_header("Location", f"http://localhost:{port}/hello")
            self.end_headers()
            return
        if self.path == "/redirect-in":
            self.send_response(302)
            self.send_header("Location", "/hello")
            self.end_headers()
            return
        pages = {
            "/hello": b"hello world",
            "/big": b"x" * 5000,
            "/caf%C3%A9%20menu?q=%C3%A9": b"the cafe menu",
        }
        status, body = {path: (200, page) for path, page in pages.items()}.get(self.path, (404, b"nope"))
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"got": json.loads(data), "type": self.headers["Content-Type"]}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:  # a client that gave up (timeouts)
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = QuietServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


async def call(
    name: str,
    *,
    api_hosts: tuple[str, ...] = (),
    wget_hosts: tuple[str, ...] | None = ("127.0.0.1",),
    **arguments: Any,
) -> Any:
    tools = web_pack(api_hosts=api_hosts, wget_hosts=wget_hosts, max_bytes=1000)
    return await Executor(tools).execute(ToolCall(id="c1", name=name, arguments=arguments, why=WHY))


async def test_wget_returns_the_content_as_a_string(server: str) -> None:
    assert await call("wget", uri=f"{server}/hello", timeoutMs=2000) == OkEnvelope(data="hello world")


async def test_wget_errors_are_data(server: str) -> None:
    assert (
        await call("wget", uri=f"{server}/missing")
    ).data == "Error: HTTP 404 from " + f"{server}/missing\nnope"
    slow = await call("wget", uri=f"{server}/slow", timeoutMs=300)
    assert slow.data.startswith("Error: ")
    assert (
        await call("wget", uri="ftp://example.com/x")
    ).data == "Error: only http and https URLs can be fetched, not 'ftp://example.com/x'"


async def test_wget_caps_the_size(server: str) -> None:
    assert (await call("wget", uri=f"{server}/big")).data == "x" * 1000 + "\n[truncated at 1000 bytes]"


async def test_wget_refuses_this_machine_and_its_network_by_default(server: str) -> None:
    envelope = await call("wget", wget_hosts=None, uri=f"{server}/hello")
    assert envelope.data == "Error: 127.0.0.1 resolves to a non-public address (127.0.0.1)"
    metadata = await call(
        "wget", wget_hosts=None, uri="http://169.254.169.254/latest/meta-data/", timeoutMs=500
    )
    assert metadata.data == "Error: 169.254.169.254 resolves to a non-public address (169.254.169.254)"


async def test_redirects_are_checked_at_every_hop(server: str) -> None:
    assert (await call("wget", uri=f"{server}/redirect-in")).data == "hello world"
    assert (await call("wget", uri=f"{server}/redirect-out")).data == "Error: host 'localhost' is not allowed"


async def test_api_call_is_disabled_by_default(server: str) -> None:
    envelope = await call("api_call", url=f"{server}/hello")
    assert envelope.error.code == "PERMISSION_DENIED"
    assert envelope.error.message == "api_call is disabled for this agent (no hosts are allowed)"


async def test_api_call_sends_json_to_an_allowed_host(server: str) -> None:
    envelope = await call(
        "api_call", api_hosts=("127.0.0.1",), url=f"{server}/items", method="POST", body={"name": "x"}
    )
    assert envelope == OkEnvelope(
        data={
            "status": 201,
            "headers": {"content-type": "application/json", "content-length": "50"},
            "body": '{"got": {"name": "x"}, "type": "application/json"}',
            "truncated": False,
        }
    )


async def test_api_call_refuses_other_hosts(server: str) -> None:
    envelope = await call("api_call", api_hosts=("api.example.com",), url=f"{server}/hello")
    assert envelope.error.code == "PERMISSION_DENIED"
    assert envelope.error.suggestion == "Allowed hosts: api.example.com."


async def test_wildcard_hosts_must_resolve_publicly(server: str) -> None:
    port = server.rsplit(":", 1)[1]
    envelope = await call("api_call", api_hosts=("*.localhost",), url=f"http://x.localhost:{port}/hello")
    assert envelope.error.code in ("PERMISSION_DENIED", "UNREACHABLE")


async def test_a_url_with_non_ascii_letters_and_spaces_is_sent_percent_encoded(server: str) -> None:
    envelope = await call("wget", uri=f"{server}/café menu?q=é")
    assert envelope.data == "the cafe menu"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"url": "http://127.0.0.1/\ud800"},
            "the URL is not Unicode text (a lone surrogate, '\\ud800', at character 17)",
        ),
        (
            {"url": "http://\udcff.example/"},
            "the URL is not Unicode text (a lone surrogate, '\\udcff', at character 7)",
        ),
        ({"url": f"http://{'a' * 64}.example/"}, f"'{'a' * 64}.example' is not a valid host name"),
        ({"body": "\ud800"}, "body is not Unicode text (a lone surrogate, '\\ud800', at character 0)"),
        (
            {"headers": {"X-Note": "a\r\nX-Injected: 1"}},
            "the value of header 'X-Note' holds a line break or NUL",
        ),
        ({"headers": {"Bad Header": "x"}}, "'Bad Header' is not a valid header name (letters, digits, -)"),
        (
            {"headers": {"X-Note": "\u2603"}},
            "the value of header 'X-Note' is not Latin-1 text (percent-encode it)",
        ),
        (
            {"headers": {"X-Note": "\ud800"}},
            "the value of header 'X-Note' is not Latin-1 text (percent-encode it)",
        ),
    ],
    ids=[
        "surrogate path",
        "surrogate host",
        "long label",
        "surrogate body",
        "crlf header",
        "bad name",
        "non-latin-1 value",
        "surrogate value",
    ],
)
async def test_a_request_that_cannot_be_sent_is_invalid_args_not_internal(
    server: str, arguments: dict[str, Any], message: str
) -> None:
    arguments = {"url": f"{server}/items", "method": "POST", **arguments}
    envelope = await call("api_call", api_hosts=("127.0.0.1", "*.example"), **arguments)
    assert envelope.error.model_dump() == {
        "code": "INVALID_ARGS",
        "message": message,
        "recoverable": True,
        "suggestion": envelope.error.suggestion,
        "details": None,
    }
    assert envelope.error.suggestion


async def test_wget_answers_a_url_with_a_lone_surrogate_as_its_other_errors(server: str) -> None:
    envelope = await call("wget", uri=f"{server}/\ud800")
    assert envelope.data.startswith("Error: the URL is not Unicode text (a lone surrogate, '\\ud800'")
