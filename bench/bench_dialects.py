"""Dialect parsing cost: one-shot parse per KB, streaming on 4-character deltas against one-shot parsing and
against the floor (a `feed` that only records the delta and returns its one `TextDelta`), the parser's own
streaming work (the stream minus that floor, which any reader of the same deltas pays) against one-shot parsing:
the standing target, at most 3x, and the naive re-parse-the-whole-buffer-on-every-delta baseline.

Every text dialect reads a synthetic output of prose and calls in its own format, written by its own
`render_calls` (one call with three arguments every ~120 characters of prose); a format whose calls run to the
end of the output (`[TOOL_CALLS]`, `functools`, `>>>`, ...) gets the prose first and all its calls after it.
Times are process CPU time, best of several runs: on a shared machine wall time also counts the moments the
process waits for a core. `python bench/bench_dialects.py hermes mistral` times only those dialects.
"""

import sys
import time
from collections.abc import Callable

from _timing import row
from tether.dialects import TextDelta, dialect_names, get_dialect, parse, stream_parser
from tether.dialects.auto import CANDIDATES as AUTO_CANDIDATES
from tether.types import ToolCall

ARGS = {"city": "Paris", "days": 3, "units": ["c", "f"]}
PROSE = "Let me look that up for you; the forecast depends on the city and on how many days you need. "
NATIVE = ("openai", "anthropic", "gemini", "auto")
REPARSED = ("hermes", "mistral", "qwen3_coder_xml", "harmony")
"""Dialects the quadratic re-parse baseline is timed for (it takes seconds each)."""


def runs_to_the_end(dialect: str) -> bool:
    """Whether the format's calls run to the end of the output (an opener with no end marker)."""
    return any(o.kind == "call" and not o.ends and not o.balanced for o in get_dialect(dialect).openers)


def output(dialect: str, size: int) -> str:
    d = get_dialect(dialect)
    call = ToolCall(id="c1", name="get_weather", arguments=ARGS)
    if runs_to_the_end(dialect):
        n = max(1, size // 400)
        calls = [call.model_copy(update={"id": f"c{i}"}) for i in range(n)]
        return PROSE * (size // len(PROSE)) + d.render_calls(calls)
    unit = PROSE + d.render_calls([call]) + "\n"
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


class Floor:
    """The least a stream parser can do per delta: count it, keep it, and return its one event."""

    def __init__(self) -> None:
        self.fed = 0
        self.content: list[str] = []

    def feed(self, delta: str) -> list[TextDelta]:
        self.fed += len(delta)
        self.content.append(delta)
        return [TextDelta(delta)]


def floor(text: str, step: int = 4) -> None:
    p = Floor()
    for i in range(0, len(text), step):
        p.feed(text[i : i + step])


def reparsed(text: str, dialect: str, step: int = 4) -> None:
    for i in range(step, len(text) + step, step):
        parse(text[:i], dialect)


def main(only: list[str]) -> None:
    dialects = only or [d for d in dialect_names() if d not in NATIVE]
    print(
        row(
            "dialect",
            "parse µs/KB (64 KB)",
            "stream 4-char deltas / one-shot",
            "stream / floor",
            "floor / one-shot",
            "(stream - floor) / one-shot, target <= 3x",
            "re-parse baseline / stream (8 KB)",
        )
    )
    print(row("---", "---:", "---:", "---:", "---:", "---:", "---:"))
    for dialect in dialects:
        big = output(dialect, 64_000)
        assert parse(big, dialect).calls, dialect
        one = best(lambda: parse(big, dialect))  # noqa: B023 - used immediately
        stream = best(lambda: streamed(big, dialect), repeat=7)  # noqa: B023
        least = best(lambda: floor(big), repeat=7)  # noqa: B023
        naive = ""
        if dialect in REPARSED:
            small = output(dialect, 8_000)
            slow = best(lambda: reparsed(small, dialect), repeat=1)  # noqa: B023
            naive = f"{slow / best(lambda: streamed(small, dialect), repeat=3):.0f}x"  # noqa: B023
        end = " (calls at the end)" if runs_to_the_end(dialect) else ""
        print(
            row(
                dialect + end,
                f"{one / (len(big) / 1000) * 1e6:.0f}",
                f"{stream / one:.2f}x",
                f"{stream / least:.2f}x",
                f"{least / one:.2f}x",
                f"{(stream - least) / one:.2f}x" + ("" if stream - least <= 3 * one else " (over)"),
                naive,
            )
        )
    if only:
        return
    # `auto` on plain text (what most replies are until a call, if any): against the costliest candidate alone.
    plain = PROSE * (40_000 // len(PROSE))
    costs = {d: best(lambda: streamed(plain, d), repeat=5) for d in AUTO_CANDIDATES}  # noqa: B023
    worst = max(costs, key=costs.__getitem__)
    auto = best(lambda: streamed(plain, "auto"), repeat=7)
    print()
    print(row("auto, 40 KB of prose in 4-char deltas", "ms", "x the costliest candidate alone"))
    print(row("---", "---:", "---:"))
    print(
        row(f"auto ({len(AUTO_CANDIDATES)} candidates)", f"{auto * 1e3:.0f}", f"{auto / costs[worst]:.2f}x")
    )
    print(row(f"costliest candidate: {worst}", f"{costs[worst] * 1e3:.1f}", "1.00x"))


main([a for a in sys.argv[1:] if a in dialect_names()])  # `python -m bench dialects` passes its own argument
