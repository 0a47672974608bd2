"""Dialect parsing cost: one-shot parse per KB, streaming on 4-character deltas against one-shot parsing,
and against the naive re-parse-the-whole-buffer-on-every-delta baseline.

Each dialect reads a synthetic output of prose and calls in its own format (one call with three arguments
every ~120 characters of prose). Times are process CPU time, best of several runs: on a shared machine wall
time also counts the moments the process waits for a core.
"""

import json
import time
from collections.abc import Callable

from _timing import row
from tether.dialects import parse, stream_parser
from tether.dialects.auto import CANDIDATES as AUTO_CANDIDATES

ARGS = {"city": "Paris", "days": 3, "units": ["c", "f"]}
J = json.dumps(ARGS)
CALLS = {
    "hermes": f'<tool_call>\n{{"name": "get_weather", "arguments": {J}}}\n</tool_call>',
    "json_calls": f'{{"toolCalls": [{{"type": "get_weather", "id": "c1", "operation": "look", "parameters": {J}}}]}}',
    "fenced": "```tool\nreturn get_weather({city: 'Paris', days: 3, units: ['c', 'f']});\n```",
    "yaml": "```yaml\ntype: tool_call\ntool: get_weather\nargs:\n  city: Paris  \n  # why not\n  days: 3\n  units: [c, f]\n```",
    "pythonic": "[get_weather(city='Paris', days=3, units=['c', 'f'])]",
    "mistral": f"[TOOL_CALLS]get_weather[ARGS]{J}",
    "llama3_json": f'{{"name": "get_weather", "parameters": {J}}}',
    "qwen3_coder_xml": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
    "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
    "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
    "kimi_k2": f"<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{J}<|tool_call_end|>",
    "gemma4": '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>',
    "harmony": f"<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{J}<|call|>",
}
PROSE = "Let me look that up for you; the forecast depends on the city and on how many days you need. "


def output(dialect: str, size: int) -> str:
    call = CALLS[dialect]
    if dialect == "mistral":  # [TOOL_CALLS] runs to the end of the output
        return PROSE * (size // len(PROSE)) + (call * max(1, size // 400))
    unit = PROSE + call + "\n"
    return unit * max(1, size // len(unit))


def best(fn: Callable[[], object], repeat: int = 9) -> float:
    t_best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        t_best = min(t_best, time.process_time() - t)
    return t_best


def streamed(text: str, dialect: str, step: int = 4) -> None:
    p = stream_parser(dialect)
    for i in range(0, len(text), step):
        p.feed(text[i : i + step])
    p.close()


def reparsed(text: str, dialect: str, step: int = 4) -> None:
    for i in range(step, len(text) + step, step):
        parse(text[:i], dialect)


print(
    row(
        "dialect",
        "parse µs/KB (64 KB)",
        "stream 4-char deltas / one-shot",
        "re-parse baseline / stream (8 KB)",
    )
)
print(row("---", "---", "---", "---"))
for dialect in CALLS:
    big = output(dialect, 64_000)
    assert parse(big, dialect).calls, dialect
    one = best(lambda: parse(big, dialect))  # noqa: B023 - used immediately
    stream = best(lambda: streamed(big, dialect), repeat=7)  # noqa: B023
    small = output(dialect, 8_000)
    naive = best(lambda: reparsed(small, dialect), repeat=1)  # noqa: B023
    stream_small = best(lambda: streamed(small, dialect), repeat=3)  # noqa: B023
    print(
        row(
            dialect,
            f"{one / (len(big) / 1000) * 1e6:.0f}",
            f"{stream / one:.2f}x",
            f"{naive / stream_small:.0f}x",
        )
    )

# `auto` on plain text (what most replies are until a call, if any): against the costliest candidate alone.
plain = PROSE * (40_000 // len(PROSE))
costs = {d: best(lambda: streamed(plain, d), repeat=5) for d in AUTO_CANDIDATES}  # noqa: B023
worst = max(costs, key=costs.__getitem__)
auto = best(lambda: streamed(plain, "auto"), repeat=7)
print()
print(row("auto, 40 KB of prose in 4-char deltas", "ms", "x the costliest candidate alone"))
print(row("---", "---", "---"))
print(row(f"auto ({len(AUTO_CANDIDATES)} candidates)", f"{auto * 1e3:.0f}", f"{auto / costs[worst]:.2f}x"))
print(row(f"costliest candidate: {worst}", f"{costs[worst] * 1e3:.1f}", "1.00x"))
