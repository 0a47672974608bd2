"""Load: N concurrent streaming sessions through tether's `/v1/chat/completions` beside a bare FastAPI relay.

Four processes, all on loopback: a fake upstream model that paces its tokens like a real one (one chunk per
token every `--interval-ms`, then a hermes tool call in four pieces), the server under test, and this
script's load generator; the servers under test run one after the other in the same run:

- **echo**: a bare FastAPI app relaying the upstream's SSE events to the client unchanged (httpx2 in,
  sse-starlette out): what any Python SSE proxy costs;
- **tether**: tether's OpenAI-compatible endpoint, pass-through tool calling (the tools taught in hermes,
  the calls read out of the text with the streaming parser, standard `tool_calls` deltas out).

Each token chunk carries the upstream's send time (`time.monotonic_ns()`, one clock for every process), so
the client measures each event's latency through the server; tether's added latency is its latency less
the echo's. The load generator is a small raw-socket HTTP client (one connection per session, ramped over
`--ramp-s`), so its own cost stays small. Sessions held = the most open at once; a session is an error
unless it answers 200, streams every token and (for tether) the tool call, and ends with `[DONE]`. Memory
per session = (the server's peak RSS during the run - its RSS before) / N.

    python bench/bench_serve.py [--sessions 1000] [--tokens 30] [--interval-ms 500] [--ramp-s 5] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from _timing import row

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
STAMP = re.compile(rb'"content": ?"(\d{6,}) "')
CALLED = re.compile(rb'"name": ?"get_weather"')


# ------------------------------------------------------------------------------------------- the upstream


async def upstream(port: int, tokens: int, interval: float) -> None:
    """A Chat Completions server streaming a role chunk at once, then `tokens` stamped chunks, one per `interval`, then a hermes call."""

    async def session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            found = re.search(rb"(?i)content-length: *(\d+)", head)
            await reader.readexactly(int(found.group(1)) if found else 0)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
            writer.write(
                b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
            )  # at once, as
            # vLLM does: the first event a client sees is the server's, not the model's first token
            for _ in range(tokens):
                await asyncio.sleep(interval)
                writer.write(
                    b'data: {"choices":[{"index":0,"delta":{"content":"%d "}}]}\n\n' % time.monotonic_ns()
                )
            for i in range(0, len(CALL), len(CALL) // 4 + 1):
                piece = json.dumps(
                    {"choices": [{"index": 0, "delta": {"content": CALL[i : i + len(CALL) // 4 + 1]}}]}
                )
                writer.write(b"data: " + piece.encode() + b"\n\n")
            writer.write(
                b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
            )
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(session, "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


# ----------------------------------------------------------------------------------- the servers under test


def echo_app(upstream_url: str) -> Any:
    import httpx2
    from fastapi import FastAPI, Request
    from sse_starlette import EventSourceResponse

    app = FastAPI()
    client = httpx2.AsyncClient(limits=httpx2.Limits(max_connections=None), timeout=60)

    async def relay(request: Request) -> EventSourceResponse:
        body = await request.json()
        response = await client.send(
            client.build_request("POST", f"{upstream_url}/chat/completions", json=body), stream=True
        )

        async def events() -> AsyncIterator[str]:
            try:
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        yield line[5:].strip()
            finally:
                await response.aclose()

        return EventSourceResponse(events(), ping=15)

    app.add_route("/v1/chat/completions", relay, methods=["POST"])  # a plain Starlette endpoint, as the lazy
    return app  # imports leave FastAPI no annotation to read the request from


def tether_app(upstream_url: str) -> Any:
    from fastapi import FastAPI

    from tether.serve._openai import Upstream, openai_router

    app = FastAPI()
    app.include_router(openai_router({"m": Upstream(base_url=upstream_url, model="fake", dialect="hermes")}))
    return app


def serve(kind: str, port: int, upstream_url: str) -> None:
    import uvicorn

    app = echo_app(upstream_url) if kind == "echo" else tether_app(upstream_url)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", backlog=4096, timeout_keep_alive=30)


# ------------------------------------------------------------------------------------------ load generator


@dataclass
class Load:
    started: int = 0
    open: int = 0
    held: int = 0
    errors: list[str] = field(default_factory=list[str])
    first_event_ms: list[float] = field(default_factory=list[float])
    event_latency_ms: list[float] = field(default_factory=list[float])
    events: int = 0


async def one_session(port: int, body: bytes, load: Load, tokens: int, want_call: bool) -> None:
    start = time.monotonic_ns()
    load.open += 1
    load.held = max(load.held, load.open)
    writer = None
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"accept: text/event-stream\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(head.split(b"\r\n", 1)[0].decode())
        stamped, first, called, done = 0, True, False, False
        while line := await reader.readline():
            if not line.startswith(b"data: "):
                continue  # chunk sizes, blank lines, comments
            now = time.monotonic_ns()
            load.events += 1
            if first:
                load.first_event_ms.append((now - start) / 1e6)
                first = False
            if line.startswith(b"data: [DONE]"):
                done = True
                break
            if (m := STAMP.search(line)) is not None:
                stamped += 1
                load.event_latency_ms.append((now - int(m.group(1))) / 1e6)
            elif b'"error"' in line:
                raise RuntimeError(line.decode()[:200])
            called = called or CALLED.search(line) is not None
        if not done or stamped != tokens or (want_call and not called):
            raise RuntimeError(f"incomplete stream: done={done} tokens={stamped}/{tokens} call={called}")
    except Exception as e:
        load.errors.append(f"{type(e).__name__}: {e}")
    finally:
        load.open -= 1
        if writer is not None:
            writer.close()


async def generate(port: int, sessions: int, ramp: float, tokens: int, want_call: bool) -> tuple[Load, float]:
    body = json.dumps(
        {
            "model": "m",
            "stream": True,
            "tools": [WEATHER],
            "messages": [{"role": "user", "content": "Weather?"}],
        }
    ).encode()
    load = Load()
    start = time.monotonic()
    tasks: list[asyncio.Task[None]] = []
    for i in range(sessions):
        tasks.append(asyncio.create_task(one_session(port, body, load, tokens, want_call)))
        await asyncio.sleep(max(0.0, start + ramp * (i + 1) / sessions - time.monotonic()))
    await asyncio.gather(*tasks)
    return load, time.monotonic() - start


# ------------------------------------------------------------------------------------------------ driver


def _fast_loop() -> None:
    """uvloop for the upstream and the load generator too, when installed (the servers get it from uvicorn)."""
    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def measure(kind: str, args: argparse.Namespace, upstream_url: str) -> dict[str, Any]:
    port = free_port()
    child = subprocess.Popen([sys.executable, __file__, "--child", kind, str(port), upstream_url])
    try:
        wait_listening(port)
        asyncio.run(generate(port, 5, 0.1, args.tokens, kind == "tether"))  # warm up imports and pools
        time.sleep(0.5)
        before = rss_kib(child.pid)
        peak = [before]

        async def run() -> tuple[Load, float]:
            async def sample() -> None:
                while True:
                    peak[0] = max(peak[0], rss_kib(child.pid))
                    await asyncio.sleep(0.2)

            sampler = asyncio.create_task(sample())
            try:
                return await generate(port, args.sessions, args.ramp_s, args.tokens, kind == "tether")
            finally:
                sampler.cancel()

        load, wall = asyncio.run(run())
    finally:
        child.send_signal(signal.SIGINT)
        child.wait(10)
    return {
        "kind": kind,
        "held": load.held,
        "ok": args.sessions - len(load.errors),
        "errors": len(load.errors),
        "first_errors": sorted(set(load.errors))[:3],
        "ttfe_p50": percentile(load.first_event_ms, 50),
        "ttfe_p99": percentile(load.first_event_ms, 99),
        "lat_p50": percentile(load.event_latency_ms, 50),
        "lat_p99": percentile(load.event_latency_ms, 99),
        "events_s": load.events / wall,
        "kib_session": (peak[0] - before) / args.sessions,
        "wall": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=int(os.environ.get("BENCH_SESSIONS", 1000)))
    parser.add_argument("--tokens", type=int, default=30)
    parser.add_argument("--interval-ms", type=float, default=500.0)
    parser.add_argument("--ramp-s", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", nargs="+")
    args, _ = parser.parse_known_args()  # `python -m bench serve` leaves its own filter in argv
    if args.child:
        kind, *rest = args.child
        if kind == "upstream":
            _fast_loop()
            asyncio.run(upstream(int(rest[0]), int(rest[1]), float(rest[2])))
        else:
            serve(kind, int(rest[0]), rest[1])
        return
    _fast_loop()
    load_before = os.getloadavg()[0]
    up_port = free_port()
    up = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--child",
            "upstream",
            str(up_port),
            str(args.tokens),
            str(args.interval_ms / 1000),
        ]
    )
    try:
        wait_listening(up_port)
        url = f"http://127.0.0.1:{up_port}/v1"
        rounds = [[measure(kind, args, url) for kind in ("echo", "tether")] for _ in range(args.rounds)]
        # on a shared machine a whole process can land in a slow spell: each server keeps its best round
        results = [min((r[i] for r in rounds), key=lambda r: (r["errors"], r["lat_p99"])) for i in range(2)]
    finally:
        up.terminate()
        up.wait(10)
    print(
        f"{args.sessions} sessions ramped over {args.ramp_s:g} s, each {args.tokens} tokens every "
        f"{args.interval_ms:g} ms then a hermes tool call; best of {args.rounds} rounds; load average "
        f"before {load_before:.1f}, after {os.getloadavg()[0]:.1f}"
    )
    print(
        row(
            "server",
            "held",
            "errors",
            "first event p50 / p99 ms",
            "event latency p50 / p99 ms",
            "events/s",
            "KiB/session",
        )
    )
    print(row(*["---"] * 7))
    for r in results:
        print(
            row(
                r["kind"],
                r["held"],
                r["errors"],
                f"{r['ttfe_p50']:.1f} / {r['ttfe_p99']:.1f}",
                f"{r['lat_p50']:.2f} / {r['lat_p99']:.2f}",
                f"{r['events_s']:.0f}",
                f"{r['kib_session']:.0f}",
            )
        )
    echo, tether = results
    print(
        f"\ntether's added latency per event: p50 {tether['lat_p50'] - echo['lat_p50']:+.2f} ms, "
        f"p99 {tether['lat_p99'] - echo['lat_p99']:+.2f} ms"
    )
    for r in results:
        if r["first_errors"]:
            print(f"{r['kind']} errors, e.g.: {r['first_errors']}")
    print(f"tether's own work per event, unloaded: {statistics.fmean(per_event_us()):.1f} µs")


def per_event_us() -> list[float]:
    """tether's own work per upstream chunk, out of any server: parse the chunk, feed the dialect's parser,
    build and serialise the client's chunk (what the pass-through adds to a relay)."""
    from tether.serve._openai_calls import CallStream
    from tether.serve._openai_upstream import _piece  # pyright: ignore[reportPrivateUsage] - measured alone
    from tether.serve._openai_wire import Chunks

    line = '{"choices":[{"index":0,"delta":{"content":"123456789 "}}]}'
    samples: list[float] = []
    for _ in range(7):
        calls, out = CallStream("hermes", [WEATHER]), Chunks("m")
        start = time.perf_counter()
        for _ in range(20_000):
            for delta in calls.feed(_piece("up", line).text):
                out.delta(delta)
        samples.append((time.perf_counter() - start) / 20_000 * 1e6)
    return sorted(samples)[:3]


if __name__ == "__main__":
    main()
