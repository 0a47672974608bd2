"""More model families, built from the same parts as the named dialects.

- Tagged JSON: a start tag, one or more JSON calls (objects, lists, or one per line), an end tag (or the end
  of the output): `ernie45`, `jamba`, `minimax`, `granite`, `granite_20b_fc`, `internlm2`, `longcat`,
  `phi4_mini`, `apertus` (`{"name": {args}}`), `gigachat3`, `command_r`, `nemotron_v2`, `firefunction_v2`,
  `granite4`, `apriel`.
- Renamed relatives: `glm47` and `poolside_v1` (GLM-4.5 calls), `step3p5_xml` and `seed_oss` (Qwen3-Coder
  XML), `lfm2` (pythonic calls between `<|tool_call_start|>` and `<|tool_call_end|>`).
- `hunyuan_a13b`: a JSON list, or `name<tool_sep>{json}` elements, inside `<tool_calls>`.
- Named-parameter XML: `minicpm5_xml` (`<function name=..><param name=..>`), `step3` (`steptml:invoke`),
  `deepseek_v32` / `deepseek_v4` (DSML `invoke` / `parameter`, values typed by `string="true|false"`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

from tether._literals import parse_value
from tether.dialects._bodies import JsonCalls, PythonCalls, XmlFunctions, XmlInvoke, arg_pairs
from tether.dialects._calls import emit_json_calls
from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener
from tether.dialects._render import json_calls, json_text, python_call, text_value, xml_function
from tether.dialects._results import tool_responses
from tether.dialects._tools import ToolIndex, coerce_text_value
from tether.dialects.glm45 import Glm45
from tether.dialects.json_objects import OBJECT_GUARD, OBJECT_VIABLE
from tether.dialects.qwen3_coder_xml import Qwen3CoderXml
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["FAMILIES"]

THINK_MARKERS = ("<think>", "</think>")


class TaggedJson(Dialect):
    """A family whose calls are JSON between markers; configure with class attributes."""

    start: ClassVar[str]
    ends: ClassVar[tuple[str, ...]] = ()
    drops: ClassVar[tuple[str, ...]] = ()
    single_key: ClassVar[bool] = False
    thinking: ClassVar[tuple[str, str]] = ("<think>", "</think>")
    """The reasoning block's start and end markers."""
    also: ClassVar[tuple[Opener, ...]] = ()
    """More openers (another form of call or reasoning), tried before the reasoning block."""
    name_key: ClassVar[str] = "name"
    args_key: ClassVar[str] = "arguments"
    """The keys a call's name and arguments go under, as the family writes them."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A family's openers are made once, from its declared markers."""
        super().__init_subclass__(**kwargs)
        cls.openers = cls.markers()

    @classmethod
    def markers(cls) -> tuple[Opener, ...]:
        """The openers the declared markers make (a family with another shape of markers overrides this)."""
        return (
            Opener(cls.start, ends=cls.ends, body=cls.body()),
            *cls.also,
            THINK
            if cls.thinking == THINK_MARKERS
            else Opener(cls.thinking[0], "reasoning", ends=cls.thinking[1:]),
            *(Opener(d, "drop") for d in cls.drops),
        )

    @classmethod
    def body(cls) -> JsonCalls:
        """Its calls: JSON values, one or several in a row."""
        return JsonCalls(several=True, single_key=cls.single_key)

    def render_tools(self, tools: ToolIndex) -> str:
        shape = (
            '{"get_weather": {"city": "Paris"}}'
            if self.single_key
            else '{"name": "get_weather", "arguments": {...}}'
        )
        end = self.ends[0] if self.ends else ""
        return f"You can call these functions:\n{tool_json_lines(tools)}\n\nTo call, write {self.start}[{shape}]{end}"

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return tool_responses(results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """One JSON list of calls between the markers."""
        if not calls:
            return ""
        if self.single_key:
            body = json_text([{c.name: c.arguments} for c in calls])
        else:
            body = json_calls(calls, name_key=self.name_key, args_key=self.args_key)
        end = self.ends[0] if self.ends and self.ends[0] != self.start else ""  # a next call's start ends one
        return f"{self.start}{body}{end}"


class Ernie45(TaggedJson):
    name: ClassVar[str] = "ernie45"
    start, ends = "<tool_call>", ("</tool_call>",)


class Jamba(TaggedJson):
    name: ClassVar[str] = "jamba"
    start, ends = "<tool_calls>", ("</tool_calls>",)


class Minimax(TaggedJson):
    name: ClassVar[str] = "minimax"
    start, ends = "<tool_calls>", ("</tool_calls>",)


class Granite(TaggedJson):
    name: ClassVar[str] = "granite"
    start = "<|tool_call|>"


class Granite20bFc(TaggedJson):
    name: ClassVar[str] = "granite_20b_fc"
    start, ends = "<function_call>", ("<function_call>",)


class Internlm2(TaggedJson):
    name: ClassVar[str] = "internlm2"
    start, ends, drops = "<|action_start|><|plugin|>", ("<|action_end|>",), ("<|im_end|>",)


class Longcat(TaggedJson):
    name: ClassVar[str] = "longcat"
    start, ends = "<longcat_tool_call>", ("</longcat_tool_call>",)


class Phi4Mini(TaggedJson):
    name: ClassVar[str] = "phi4_mini"
    start = "functools"


class Apertus(TaggedJson):
    name: ClassVar[str] = "apertus"
    start, ends, single_key = "<|tools_prefix|>", ("<|tools_suffix|>",), True


class Gigachat3(TaggedJson):
    name: ClassVar[str] = "gigachat3"
    start, drops = "function call<|role_sep|>", ("<|message_sep|>", "</s>")

    @classmethod
    def markers(cls) -> tuple[Opener, ...]:
        body = cls.body()
        return (
            Opener(cls.start, body=body),
            Opener("<|function_call|>", body=body),
            Opener(
                "{",
                balanced=True,
                body=body,
                guard=OBJECT_GUARD,
                guard_len=24,
                viable=OBJECT_VIABLE,
                quotes='"',
            ),
            THINK,
            *(Opener(d, "drop") for d in cls.drops),
        )


class CommandR(TaggedJson):
    """Command R7B / Command A: `<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]<|END_ACTION|>`
    after `<|START_THINKING|>` reasoning, the answer in `<|START_RESPONSE|>` (`<|START_TEXT|>`); Command R(+):
    `Action: ```json [...] ```` on a line of its own."""

    name: ClassVar[str] = "command_r"
    start, ends = "<|START_ACTION|>", ("<|END_ACTION|>",)
    thinking = ("<|START_THINKING|>", "<|END_THINKING|>")
    name_key, args_key = "tool_name", "parameters"
    also = (Opener("Action: ```json", ends=("```",), body=JsonCalls(several=True), line_start=True),)
    drops = ("<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>")


class NemotronV2(TaggedJson):
    """Nemotron Nano 2: `<TOOLCALL>[{"name", "arguments"}]</TOOLCALL>` after `<think>` reasoning."""

    name: ClassVar[str] = "nemotron_v2"
    start, ends = "<TOOLCALL>", ("</TOOLCALL>",)


class FirefunctionV2(TaggedJson):
    """FireFunction v2: ` functools[{"name", "arguments"}]`."""

    name: ClassVar[str] = "firefunction_v2"
    start = "functools"


class Granite4(TaggedJson):
    """Granite 4: `<tool_call>{"name", "arguments"}</tool_call>` (Granite 3 is `granite`: `<|tool_call|>[...]`)."""

    name: ClassVar[str] = "granite4"
    start, ends = "<tool_call>", ("</tool_call>",)


class Apriel(TaggedJson):
    """Apriel 1.5/1.6: `<tool_calls>[{"name", "arguments"}]</tool_calls>`; reasoning is `Here are my reasoning
    steps:` up to `[BEGIN FINAL RESPONSE]` (1.6, whose template writes the first line itself: pass
    `reasoning_open=True`) or `<thinking>...</thinking>` (1.5)."""

    name: ClassVar[str] = "apriel"
    start, ends = "<tool_calls>", ("</tool_calls>",)
    thinking = ("<thinking>", "</thinking>")
    also = (Opener("Here are my reasoning steps:", "reasoning", ends=("[BEGIN FINAL RESPONSE]",)),)
    drops = ("[END FINAL RESPONSE]", "<|end|>")


class Glm47(Glm45):
    name: ClassVar[str] = "glm47"


class PoolsideV1(Glm45):
    name: ClassVar[str] = "poolside_v1"


class Step3p5Xml(Qwen3CoderXml):
    name: ClassVar[str] = "step3p5_xml"


class SeedOss(Qwen3CoderXml):
    name: ClassVar[str] = "seed_oss"

    openers = (  # Seed-OSS writes values inline
        Opener("<seed:tool_call>", ends=("</seed:tool_call>",), body=XmlFunctions(value_lines=False)),
        Opener("<seed:think>", "reasoning", ends=("</seed:think>",)),
    )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(
            f"<seed:tool_call>\n{xml_function(c, value_lines=False)}\n</seed:tool_call>\n" for c in calls
        )


class Lfm2(Dialect):
    name: ClassVar[str] = "lfm2"

    openers = (  # LFM2 may write JSON calls too
        Opener("<|tool_call_start|>", ends=("<|tool_call_end|>",), body=PythonCalls(or_json=True)),
        THINK,
    )

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"List of tools: <|tool_list_start|>{tool_json_lines(tools)}<|tool_list_end|>\n"
            "To call, write <|tool_call_start|>[func(param=value)]<|tool_call_end|>"
        )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        if not calls:
            return ""
        return f"<|tool_call_start|>[{', '.join(python_call(c) for c in calls)}]<|tool_call_end|>"


class _HunyuanCalls:
    """`<tool_calls>` holding a JSON list, or `<tool_call>name<tool_sep>{json}</tool_call>` elements."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        if text.lstrip()[:1] in ("[", "{"):
            emit_json_calls(out, text, span, complete)
            return
        parts = text.split("<tool_call>")[1:]
        if not parts:
            out.fail("no <tool_call> in <tool_calls>", span, text)
        for part in parts:
            part = part.split("</tool_call>", 1)[0]
            name, sep, rest = part.partition("<tool_sep>")
            name = name.strip()
            if not sep or not name:
                out.fail("a call needs name<tool_sep>arguments", span, part)
                continue
            if "<arg_key>" in rest:
                pairs = arg_pairs(rest, 0)
                args: dict[str, Any] = {}
                repairs: list[Repair] = []
                for key, raw in pairs:
                    args[key], repair = coerce_text_value(raw, out.tools.param_schema(name, key), f"$.{key}")
                    if repair is not None:
                        repairs.append(repair)
                out.call(name, args, span, repairs)
                continue
            v = parse_value(rest) if rest.strip() else None
            value: Any = v.value if v is not None else {}
            if v is not None and (not v.ok or not isinstance(value, dict)):
                out.fail(f"arguments of {name} are not a JSON object", span, part)
                continue
            out.call(name, cast("dict[str, Any]", value), span, v.repairs if v is not None else [])


class HunyuanA13b(Dialect):
    name: ClassVar[str] = "hunyuan_a13b"

    openers = (
        Opener("<tool_calls>", ends=("</tool_calls>",), body=_HunyuanCalls()),
        THINK,
        Opener("<answer>", "drop"),
        Opener("</answer>", "drop"),
    )

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"You can call these functions:\n{tool_json_lines(tools)}\n\n"
            'To call, write <tool_calls>[{"name": "NAME", "arguments": {...}}]</tool_calls>'
        )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return f"<tool_calls>{json_calls(calls)}</tool_calls>" if calls else ""


def _invoke_dialect(
    name: str,
    start: str,
    end: str,
    invoke: str,
    param: str,
    invoke_end: str,
    param_end: str,
    *,
    typed: bool = False,
) -> Dialect:
    body = XmlInvoke(invoke, param, invoke_end, param_end, bare=start == invoke)

    class _Invoke(Dialect):
        openers = (Opener(start, ends=(end,), body=body), THINK)

        def render_tools(self, tools: ToolIndex) -> str:
            return (
                f"You can call these functions:\n{tool_json_lines(tools)}\n\nTo call, write {start}"
                f'{invoke} name="NAME">{param} name="KEY">VALUE{param_end}{invoke_end}{end}'
            )

        def render_calls(self, calls: Sequence[ToolCall]) -> str:
            body = "".join(
                f'{invoke} name="{c.name}">'
                + "".join(
                    f'{param} name="{k}"{_string_attr(v) if typed else ""}>{text_value(v)}{param_end}'
                    for k, v in c.arguments.items()
                )
                + invoke_end
                for c in calls
            )
            if start == invoke or not calls:  # each call is a region of its own
                return body
            return f"{start}{body}{end}"

    _Invoke.name = name
    return _Invoke()


def _string_attr(value: Any) -> str:
    """DSML marks which values are strings (the rest are JSON)."""
    return f' string="{str(isinstance(value, str)).lower()}"'


_DSML = "<\uff5cDSML\uff5c"
_STEP = "<\uff5ctool_calls_begin\uff5c>", "<\uff5ctool_calls_end\uff5c>"

FAMILIES: tuple[Dialect, ...] = (
    Ernie45(),
    Jamba(),
    Minimax(),
    Granite(),
    Granite20bFc(),
    Internlm2(),
    Longcat(),
    Phi4Mini(),
    Apertus(),
    Gigachat3(),
    CommandR(),
    NemotronV2(),
    FirefunctionV2(),
    Granite4(),
    Apriel(),
    Glm47(),
    PoolsideV1(),
    Step3p5Xml(),
    SeedOss(),
    Lfm2(),
    HunyuanA13b(),
    _invoke_dialect(
        "minicpm5_xml", "<function", "</function>", "<function", "<param", "</function>", "</param>"
    ),
    _invoke_dialect(
        "step3", *_STEP, "<steptml:invoke", "<steptml:parameter", "</steptml:invoke>", "</steptml:parameter>"
    ),
    _invoke_dialect(
        "deepseek_v32",
        f"{_DSML}function_calls>",
        f"</{_DSML[1:]}function_calls>",
        f"{_DSML}invoke",
        f"{_DSML}parameter",
        f"</{_DSML[1:]}invoke>",
        f"</{_DSML[1:]}parameter>",
        typed=True,
    ),
    _invoke_dialect(
        "deepseek_v4",
        f"{_DSML}tool_calls>",
        f"</{_DSML[1:]}tool_calls>",
        f"{_DSML}invoke",
        f"{_DSML}parameter",
        f"</{_DSML[1:]}invoke>",
        f"</{_DSML[1:]}parameter>",
        typed=True,
    ),
)
"""Instances of the extra families, for registration."""
