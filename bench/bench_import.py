"""Start-up: the time of `import tether` (and of first use) against the interpreter floor and peers.

Each figure is the median wall time of a fresh `python -c ...`, minus the bare interpreter's.
Peers are measured only when installed (`uv sync --group bench`).
"""

import importlib.util

from _timing import process_ms, row

CASES = [
    ("tether: `import tether`", "tether", "import tether"),
    ("tether: first use (`tether.tool`, loads pydantic)", "tether", "import tether; tether.tool"),
    ("tether: tools + a @tool function", "tether", "import tether\n@tether.tool\ndef f(x: int) -> int: return x"),
    ("tether: an agent (`from tether import Agent, tool`)", "tether", "from tether import Agent, tool"),
    ("floor: `import pydantic` + one BaseModel", "pydantic", "import pydantic\nclass M(pydantic.BaseModel): x: int"),
    ("peer: pydantic-ai (`import pydantic_ai`)", "pydantic_ai", "import pydantic_ai"),
    ("peer: openai-agents (`import agents`)", "agents", "import agents"),
    ("peer: langgraph (`from langgraph.prebuilt import create_react_agent`)", "langgraph",
     "from langgraph.prebuilt import create_react_agent"),
    ("peer: smolagents (`import smolagents`)", "smolagents", "import smolagents"),
]  # fmt: skip

bare = process_ms("pass")
print(row("what", "ms over a bare interpreter"))
print(row("---", "---:"))
for label, module, code in CASES:
    if importlib.util.find_spec(module) is None:
        print(row(label, "not installed"))
        continue
    print(row(label, f"{process_ms(code) - bare:.1f}"), flush=True)
print(f"\n(bare interpreter: {bare:.1f} ms)")
