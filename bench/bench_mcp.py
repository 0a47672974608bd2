"""One MCP tool call over stdio: the SDK's bare client beside tether's client (MCPToolset) and executor.

All talk to the same kind of server (written with the SDK, 100 tools) in the same run, measured in turns so
load on the machine falls on each alike:

- "SDK bare client": `Client.call_tool` on this loop, the floor.
- "tether client, async with": the mounted tool's function, the toolset opened with `async with` (the
  connection on this loop, as `tether run` and `tether serve` open it).
- "tether client, thread": the same toolset opened with `with` (the connection on a thread of its own).
- "tether executor, async with": every guard, the record and the in-memory journal in front.
- "SDK + guards": the floor plus the guards' own cost, measured on a local tool that waits 0.5 ms (the
  executor over it minus the tool called directly).

Wall time per call, and this process's CPU time per call (the server's is the same for all). Also: listing
100 tools, bare and as tether specs.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp.client.stdio import stdio_client

from _timing import row
from mcp import Client, StdioServerParameters
from tether.execution import Executor
from tether.mcp import MCPToolset
from tether.tools import Toolset, from_mcp, tool
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
CALLS, ROUNDS = 200, 7
Runner = Callable[[], Awaitable[object]]


@tool(side_effects="none")
async def add(a: int, b: int) -> dict[str, int]:
    """Add two integers after waiting 0.5 ms, as a tool that waits on I/O does (a local tool: what the
    guards cost on their own; the executor costs more around a call that really waits than one that not)."""
    await anyio.sleep(0.0005)
    return {"total": a + b}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "server.py"
        script.write_text(SERVER)
        command = [sys.executable, str(script)]
        with MCPToolset.stdio(command) as threaded:
            anyio.run(lambda: measure(command, threaded))


async def measure(command: list[str], threaded: MCPToolset) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    call = ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2})
    local = Executor(Toolset(add))
    with open("/dev/null", "w") as quiet:  # noqa: ASYNC230 - opened once, before timing
        async with Client(stdio_client(params, errlog=quiet)) as bare, MCPToolset.stdio(command) as linked:
            linked_add, threaded_add, local_add = (
                linked.tools()["add"].function, threaded.tools()["add"].function, add.function,
            )  # fmt: skip
            assert linked_add is not None
            assert threaded_add is not None
            assert local_add is not None
            guarded = Executor(linked)
            runners: dict[str, Runner] = {
                "SDK bare client": lambda: bare.call_tool("add", {"a": 1, "b": 2}),
                "tether client, async with": lambda: linked_add(a=1, b=2),
                "tether client, thread": lambda: threaded_add(a=1, b=2),
                "tether executor, async with": lambda: guarded.execute(call),
                "local tool, direct": lambda: local_add(a=1, b=2),
                "local tool, executor": lambda: local.execute(call),
            }
            wall: dict[str, list[float]] = {name: [] for name in runners}
            cpu: dict[str, list[float]] = {name: [] for name in runners}
            for _ in range(ROUNDS):
                for name, run in runners.items():
                    for _ in range(20):
                        await run()  # warm
                    start, start_cpu = time.perf_counter(), time.process_time()
                    for _ in range(CALLS):
                        await run()
                    wall[name].append((time.perf_counter() - start) / CALLS * 1e6)
                    cpu[name].append((time.process_time() - start_cpu) / CALLS * 1e6)
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
    median = {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in runners}
    guards = tuple(
        e - d
        for e, d in zip(median.pop("local tool, executor"), median.pop("local tool, direct"), strict=True)
    )
    floor = median["SDK bare client"]
    median["SDK + guards"] = (floor[0] + guards[0], floor[1] + guards[1])
    print(row("one call to `add` over stdio", "median µs", "vs SDK", "client CPU µs"))
    print(row("---", "---:", "---:", "---:"))
    for name, (us, cpu_us) in median.items():
        print(row(name, f"{us:,.0f}", f"{us / floor[0]:.2f}x", f"{cpu_us:,.0f}"))
    executor = median["tether executor, async with"][0]
    print(f"\ntether executor / (SDK + guards): {executor / median['SDK + guards'][0]:.2f}x "
          f"(guards alone: {guards[0]:,.0f} µs wall, {guards[1]:,.0f} µs CPU)")  # fmt: skip
    print()
    print(row("100 tools", "median ms"))
    print(row("---", "---:"))
    print(row("tools/list (SDK)", f"{statistics.median(listing):.1f}"))
    print(row("+ as tether specs", f"{statistics.median(specs):.1f}"))


if __name__ == "__main__":
    main()
