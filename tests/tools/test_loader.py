"""Loading tools from files and modules: the same tool from every source validates the same way."""

from pathlib import Path

import pytest

from tether.exceptions import UserError
from tether.tools import load_tools
from tether.types import ToolCall

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "weather"


@pytest.mark.parametrize("name", ["weather.py", "weather.yaml", "weather.ts", "weather.openai.json"])
def test_the_same_bad_call_is_refused_the_same_way_whatever_the_source(name: str) -> None:
    tool = load_tools(EXAMPLES / name).get("get_weather")
    assert tool is not None
    checked = tool.validate_call(
        ToolCall(id="c1", name="get_weather", arguments={"days": "3", "unit": "kelvin"})
    )
    assert [str(p) for p in checked.problems] == [
        "$.city: missing required argument",
        '$.unit: must be one of "c", "f"; got "kelvin"',
    ]
    assert [(r.path, r.message) for r in checked.call.repairs] == [("$.days", '"3" -> 3')]


@pytest.mark.parametrize("name", ["weather.py", "weather.yaml", "weather.ts", "weather.openai.json"])
def test_an_unknown_argument_is_refused_the_same_way_whatever_the_source(name: str) -> None:
    tool = load_tools(EXAMPLES / name).get("get_weather")
    assert tool is not None
    checked = tool.validate_call(ToolCall(id="c1", name="get_weather", arguments={"city": "Oslo", "day": 5}))
    assert [str(p) for p in checked.problems] == ["$.day: unknown argument; did you mean `days`?"]


def test_a_module_path_loads_its_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_tools.py").write_text(
        "from tether import tool, Toolset\n"
        "@tool\ndef a(x: int) -> int:\n    return x\n"
        "@tool\ndef b() -> None:\n    return None\n"
        "extra = Toolset(a)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))  # pyright: ignore[reportUnknownMemberType] - pytest's own stub
    assert load_tools("my_tools").names() == ["a", "b"]


@pytest.mark.parametrize(
    ("source", "message"),
    [("missing.yaml", "No such tool definition file"), ("no_such_module_xyz", "Cannot import")],
)
def test_missing_sources_are_user_errors(source: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        load_tools(source)


def test_a_module_without_tools_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(UserError, match="defines no tools"):
        load_tools(tmp_path / "empty.py")
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(UserError, match="not valid JSON"):
        load_tools(tmp_path / "bad.json")
