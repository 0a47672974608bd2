"""PerinMetrics never carries a secret value: its attributes are tool names, outcomes, error codes and the
names of missing fields, whatever the call's arguments or the tool's result and error message hold."""

import json
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the perin extra is not installed")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from _secret_tools import PASSWORD, PASSWORD_FIELD, marked
from tether import NeedsInput, ToolError, tool
from tether.execution import Executor, Run
from tether.packs.perin import PerinMetrics
from tether.types import ToolCall

from .test_telemetry import points

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
def login(user: str, password: str, otp: str | None = None) -> dict[str, Any]:
    """Log in."""
    if user == "eve":
        raise ToolError("DENIED", f"{user} may not use {password}", suggestion=f"not {password}")
    if otp is None:
        raise NeedsInput(otp=f"The code for {password}?")
    return {"greeting": f"welcome {user}, {password} works", "timeToConfirmS": 1.5}


LOGIN = marked(login, inputs={"password": PASSWORD_FIELD})


async def test_no_metric_attribute_shows_a_secret_argument_or_its_echo() -> None:
    reader = InMemoryMetricReader()
    executor = Executor([LOGIN], recorders=[PerinMetrics(MeterProvider(metric_readers=[reader]))])
    for n, arguments in enumerate(
        [
            {"user": "ada", "password": PASSWORD},  # needs
            {"user": "ada", "password": PASSWORD, "otp": "123456"},  # ok
            {"user": "eve", "password": PASSWORD},  # an error quoting it
            {"user": PASSWORD, "password": 7},  # invalid, the password in a plain field
        ]
    ):
        await executor.execute(ToolCall(id=f"c{n}", name="login", arguments=arguments), Run())
    seen = points(reader)
    assert {a["outcome"] for a, _ in seen["perin.tool_calls"]} == {"ok", "needs", "error"}
    assert PASSWORD not in json.dumps(seen, default=str)
