"""A run's budget: model turns, output written and refusals per tool, each ending the run with its reason."""

import pytest

from tether.loop import End, Limits, TurnResult
from tether.loop._limits import Budget, LimitReached
from tether.types import ErrorEnvelope, ErrorInfo, OkEnvelope, ToolCall


def refused(code: str) -> ErrorEnvelope:
    return ErrorEnvelope(error=ErrorInfo(code=code, message="no", recoverable=True))


def test_a_turn_is_counted_only_when_no_limit_stops_it() -> None:
    budget = Budget(Limits(max_iterations=2))
    assert [budget.next_turn(tool_calls=0) for _ in range(3)] == [None, None, "max_iterations"]
    assert budget.iterations == 2
    assert Budget(Limits(max_tool_calls=3)).next_turn(tool_calls=3) == "max_tool_calls"


def test_output_past_the_token_limit_stops_the_model_at_once() -> None:
    budget = Budget(Limits(max_tokens=2))  # about 8 characters
    budget.wrote(7)
    with pytest.raises(LimitReached) as reached:
        budget.wrote(1)
    assert reached.value.reason == "max_tokens"


def test_refusals_past_the_retry_budget_end_the_run_but_quota_refusals_do_not_count() -> None:
    budget = Budget(Limits(retry_budget=1))
    call = ToolCall(id="c0", name="lookup", arguments={})
    quota = TurnResult("", [call], [refused("QUOTA_EXCEEDED")])
    assert [budget.refused(quota) for _ in range(3)] == [None, None, None]
    invalid = TurnResult("", [call], [refused("INVALID_ARGS")])
    assert budget.refused(invalid) is None
    assert budget.refused(TurnResult("", [call], [OkEnvelope(data=1)])) is None
    assert budget.refused(invalid) == End(
        None, "retry_budget", problem="lookup was refused 2 times in this run; stopping."
    )
