"""One MCP tool call over stdio: the SDK's bare client beside tether's client (MCPToolset) and executor.

All three talk to the same kind of server (written with the SDK, 100 tools) in the same run, measured in
turns so load on the machine falls on each alike. "tether client" calls the mounted tool's function
directly (the hop to the connection's thread and the result's conversion); "tether executor" adds every
guard, the Kalygo record and the in-memory journal. Also: listing 100 tools, bare and as tether specs.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.stdio import stdio_client

from _timing import row
from mcp import Client, StdioServerParameters
from tether.execution import Executor
from tether.mcp import MCPToolset
from tether.tools import from_mcp
from tether.types import ToolCall

SERVER = """
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("bench")
for i in range(99):
    server.add_tool(lambda x: x, name=f"tool_{i}", description=f"Tool number {i}.")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    return a + b


server.run("stdio")
"""
CALLS, ROUNDS = 200, 5


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "server.py"
        script.write_text(SERVER)
        command = [sys.executable, str(script)]
        with MCPToolset.stdio(command) as mounted:
            anyio.run(lambda: measure(command, mounted))


async def measure(command: list[str], mounted: MCPToolset) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    executor = Executor(mounted)
    direct = mounted.tools()["add"].function
    assert direct is not None
    call = ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2})
    with open("/dev/null", "w") as quiet:  # noqa: ASYNC230 - opened once, before timing
        async with Client(stdio_client(params, errlog=quiet)) as bare:

            async def sdk() -> None:
                await bare.call_tool("add", {"a": 1, "b": 2})

            async def client() -> None:
                await direct(a=1, b=2)

            async def guarded() -> None:
                await executor.execute(call)

            samples: dict[str, list[float]] = {
                "SDK bare client": [],
                "tether client": [],
                "tether executor": [],
            }
            runners = dict(zip(samples, (sdk, client, guarded), strict=True))
            for _ in range(ROUNDS):
                for name, run in runners.items():
                    for _ in range(20):
                        await run()  # warm
                    start = time.perf_counter()
                    for _ in range(CALLS):
                        await run()
                    samples[name].append((time.perf_counter() - start) / CALLS * 1e6)
            listing: list[float] = []
            specs: list[float] = []
            for _ in range(ROUNDS * 4):
                start = time.perf_counter()
                listed = (await bare.list_tools(cache_mode="refresh")).tools
                listing.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                for entry in listed:
                    from_mcp(entry.model_dump(mode="json", by_alias=True, exclude_none=True))
                specs.append((time.perf_counter() - start) * 1000)
    floor = statistics.median(samples["SDK bare client"])
    print(row("one call to `add` over stdio", "median µs", "vs SDK"))
    print(row("---", "---:", "---:"))
    for name, values in samples.items():
        median = statistics.median(values)
        print(row(name, f"{median:,.0f}", f"{median / floor:.2f}x"))
    print()
    print(row("100 tools", "median ms"))
    print(row("---", "---:"))
    print(row("tools/list (SDK)", f"{statistics.median(listing):.1f}"))
    print(row("+ as tether specs", f"{statistics.median(specs):.1f}"))


if __name__ == "__main__":
    main()
