"""`reka`: Reka Edge / Reka Flash: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one wrapper per call,
thinking in `<think>...</think>` (Reka Edge) or `<reasoning>...</reasoning>` (Reka Flash 3), turns ended by `<sep>`.

Sources (read, not copied):
- llama.cpp's Reka Edge handler, `common/chat-reka.cpp` (pull request #21616, "Add support for Reka Edge 2603",
  merged April 2026; read in the auroralabs-loci/llama.cpp mirror at b6f0af2): tool calls are JSON objects
  (`name`, `arguments`), each in its own `<tool_call>...</tool_call>` wrapper, zero or more of them after the
  content, whitespace between them; reasoning is `<think>...</think>` before the content, and when thinking is
  enabled the generation prompt has already opened `<think>`, so the output begins inside the block and shows only
  `</think>` (`open_reasoning()`); tool results go back in `<tool_response>...</tool_response>`; generation stops
  at `<sep>`. The pull request's own discussion says the template (`models/templates/Reka-Edge.jinja`, stored only
  as a Git LFS pointer where it could be searched) loops over a message's calls writing a wrapper around each.
- llama.cpp pull request #21892, "autoparser: support case of JSON_NATIVE with per-call markers", which makes
  llama.cpp's generic parser read exactly that shape, tested on the Reka Edge template.
- Reka's model cards on the Hugging Face hub (RekaAI/reka-flash-3, reka-flash-3.1): the prompt format is
  `human: ... <sep> assistant: ... <sep>`, generation should stop at the string `<sep>`, and Reka Flash 3 writes
  its thinking between `<reasoning>` tags before the answer.

A call written inside a reasoning block is reasoning, not a call (as for every format with a reasoning channel;
llama.cpp's grammar instead lets a `<tool_call>` end an unclosed `<think>`); a `<sep>` the server did not stop at is
dropped. Tools are taught, and results fed back (`<tool_response>`), as for Hermes: the template text itself was
not available to read.
"""

from __future__ import annotations

from typing import ClassVar

from tether.dialects._bodies import JsonCalls
from tether.dialects._regions import THINK, Opener
from tether.dialects.hermes import Hermes

__all__ = ["Reka"]


class Reka(Hermes):
    """Reka's calls: Hermes's, one `<tool_call>` wrapper per call (as its template writes them, and as
    `render_calls` does), with `<think>` (Edge) or `<reasoning>` (Flash 3) thinking and `<sep>` turns."""

    name: ClassVar[str] = "reka"

    openers = (
        Opener("<tool_call>", ends=("</tool_call>",), body=JsonCalls(announce=True)),
        THINK,  # first of the two: the block Reka Edge's generation prompt opens (`open_reasoning`)
        Opener("<reasoning>", "reasoning", ends=("</reasoning>",)),
        Opener("<sep>", "drop"),
    )
