"""`reka`: Reka Edge / Reka Flash: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one wrapper per call,
thinking in `<reasoning>...</reasoning>`, turns separated by `<sep>`.

Sources (read, not copied):
- llama.cpp pull request #21616, "Add support for Reka Edge 2603" (merged April 2026), which adds Reka's chat
  template (`models/templates/Reka-Edge.jinja`): tool calls are JSON, and the template loops over a message's
  calls writing a separate `<tool_call>...</tool_call>` around each one (not one wrapper holding a list); the
  template has reasoning blocks, though Reka Edge 2603 itself does not reason.
- llama.cpp pull request #21892, "autoparser: support case of JSON_NATIVE with per-call markers", which makes
  llama.cpp's generic parser read exactly that shape (each JSON call with its own opening and closing marker),
  tested on the Reka Edge template.
- Reka's model cards on the Hugging Face hub (huggingface.co/RekaAI/reka-flash-3, reka-flash-3.1): the prompt
  format is `human: ... <sep> assistant: ... <sep>`, generation should stop at the string `<sep>`, and the
  model writes its thinking between `<reasoning>` tags before the answer.

A call written inside `<reasoning>` is reasoning, not a call (as for every format with a reasoning channel); a
`<sep>` the server did not stop at is dropped. Tools are taught, and results fed back (`<tool_response>`), as
for Hermes: the template text itself was not available to read.
"""

from __future__ import annotations

from typing import ClassVar

from tether.dialects._bodies import JsonCalls
from tether.dialects._regions import Opener
from tether.dialects.hermes import Hermes

__all__ = ["Reka"]


class Reka(Hermes):
    """Reka's calls: Hermes's, one `<tool_call>` wrapper per call (as its template writes them, and as
    `render_calls` does), with `<reasoning>` thinking and `<sep>` turns."""

    name: ClassVar[str] = "reka"

    openers = (
        Opener("<tool_call>", ends=("</tool_call>",), body=JsonCalls(announce=True)),
        Opener("<reasoning>", "reasoning", ends=("</reasoning>",)),
        Opener("<sep>", "drop"),
    )
