"""The perin pack registers like a third-party pack, costs nothing until used, and offers seed 002's tools."""

import subprocess
import sys
from pathlib import Path

from tether.builtin import PackConfig, build_tools, packs
from tether.tools import export_tools


def test_the_pack_is_listed_through_its_entry_point_without_loading_the_network() -> None:
    code = (
        "import sys; from tether.builtin import packs; assert 'perin' in packs(); "
        "assert 'sqlalchemy' not in sys.modules, 'listing packs loaded SQLAlchemy'; "
        "assert 'opentelemetry' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert packs()["perin"].name == "perin"


def test_the_tools_have_the_seeds_names_and_schema(tmp_path: Path) -> None:
    tools = build_tools(["perin"], PackConfig(options={"perin_url": f"sqlite:///{tmp_path / 'perin.db'}"}))
    exported = {t["function"]["name"]: t["function"] for t in export_tools(tools, "openai")}
    assert set(exported) == {
        "network_schedule_meeting",
        "network_confirm_meeting",
        "notifications_list",
        "notifications_resolve",
        "integrations_connect",
    }
    schedule = exported["network_schedule_meeting"]
    assert schedule["description"] == "Start a negotiation session and propose slots to a counterpart."
    parameters = schedule["parameters"]
    assert parameters["required"] == ["counterpart"]
    assert set(parameters["properties"]) == {
        "counterpart",
        "durationMins",
        "startWindow",
        "endWindow",
        "tzHint",
    }
    [duration, _] = parameters["properties"]["durationMins"]["anyOf"]
    assert duration == {"type": "integer", "minimum": 5, "maximum": 240}
    confirm = exported["network_confirm_meeting"]["parameters"]
    assert set(confirm["properties"]) == {"sessionId", "selectionIndex", "start", "end"}
    # no tool takes the acting user's id: it is the principal's
    for function in exported.values():
        assert not {"userId", "user", "principal"} & set(function["parameters"].get("properties", {}))
