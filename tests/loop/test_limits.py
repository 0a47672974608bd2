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


def test_tokens_the_model_reports_replace_the_estimate_from_characters() -> None:
    budget = Budget(Limits(max_tokens=10))
    budget.wrote(36)  # ~9 tokens estimated at 4 characters a token
    assert budget.used() == 9
    budget.reported(3)  # the provider counted 3: the turn is 3 tokens, not 9
    assert budget.used() == 3
    budget.wrote(36)  # more output in the same turn: the report stands until the next one
    assert budget.used() == 3
    budget.reported(0)  # a report of input tokens only changes nothing
    budget.reported(2)  # nor does a smaller running total
    assert budget.used() == 3
    with pytest.raises(LimitReached) as reached:
        budget.reported(10)
    assert reached.value.reason == "max_tokens"


def test_a_turn_without_a_report_is_estimated_from_the_run_s_reported_turns() -> None:
    budget = Budget(Limits(max_tokens=200))
    assert budget.next_turn(tool_calls=0) is None
    budget.wrote(400)
    budget.reported(20)  # turn 1: 20 tokens for 400 characters, 20 characters a token
    assert budget.next_turn(tool_calls=0) is None
    assert budget.used() == 20
    budget.wrote(200)  # turn 2, not reported (yet): ~10 tokens at this model's 20 characters a token
    assert budget.used() == 30
    assert budget.next_turn(tool_calls=0) is None
    budget.reported(169)  # turn 3: 30 + 169
    with pytest.raises(LimitReached):
        budget.reported(170)  # 30 + 170 reaches the limit


def test_the_limit_is_checked_before_a_turn_against_every_earlier_turn() -> None:
    budget = Budget(Limits(max_tokens=50))
    budget.next_turn(tool_calls=0)
    budget.reported(49)
    assert budget.next_turn(tool_calls=0) is None
    with pytest.raises(LimitReached):  # below the limit alone, at it with the earlier turn
        budget.reported(1)
    budget = Budget(Limits(max_tokens=50))
    budget.next_turn(tool_calls=0)
    with pytest.raises(LimitReached):
        budget.wrote(200)  # 50 tokens estimated: the model is stopped, and no next turn may start
    assert budget.next_turn(tool_calls=0) == "max_tokens"
