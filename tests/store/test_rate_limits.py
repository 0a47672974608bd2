"""Rate limits kept beside the journal: every executor (and agent, and worker) on the database shares them."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest

from tether.execution import Executor, Principal, Run
from tether.loop import Agent
from tether.models import ScriptedModel
from tether.store import MemoryRateLimits, SqlJournal
from tether.tools import tool
from tether.types import AnyEnvelope, ErrorEnvelope, OkEnvelope, RateLimit, ToolCall

pytestmark = pytest.mark.anyio

OpenJournal = Callable[[str], SqlJournal]


@tool(side_effects="none", rate_limit=RateLimit(calls=2, per_seconds=3600))
def search(query: str) -> str:
    return f"results for {query}"


def call(number: int) -> ToolCall:
    return ToolCall(id=f"c{number}", name="search", arguments={"query": f"q{number}"})


async def test_executors_sharing_a_journal_database_share_its_rate_limits(
    journal_url: str, open_journal: OpenJournal
) -> None:
    first = Executor([search], journal=open_journal(journal_url))
    second = Executor([search], journal=open_journal(journal_url))  # another worker on the same database
    ada = Run(Principal("ada"))
    answers = [
        await first.execute(call(1), ada),
        await second.execute(call(2), ada),
        await second.execute(call(3), ada),
        await first.execute(call(4), Run(Principal("bob"))),
    ]
    assert answers[:2] == [OkEnvelope(data="results for q1"), OkEnvelope(data="results for q2")]
    assert isinstance(answers[2], ErrorEnvelope)
    assert answers[2].error.code == "RATE_LIMITED"
    assert answers[3] == OkEnvelope(data="results for q4")  # per principal


async def test_a_new_agent_on_the_same_journal_does_not_reset_the_limit(
    journal_url: str, open_journal: OpenJournal
) -> None:
    turn = '<tool_call>\n{"name": "search", "arguments": {"query": "oslo"}}\n</tool_call>'
    refusals: list[str] = []
    for _ in range(3):  # three agents, as three requests to a web app would make
        agent = Agent(
            ScriptedModel([turn, "done"]),
            [search],
            dialect="hermes",
            executor=Executor([search], journal=open_journal(journal_url)),
            principal=Principal("ada"),
        )
        result = await agent.run("Search for Oslo")
        refusals += [
            e.error.code
            for m in result.messages
            if isinstance(e := getattr(m, "envelope", None), ErrorEnvelope)
        ]
    assert refusals == ["RATE_LIMITED"]


def test_takes_from_many_threads_never_hand_out_more_tokens_than_the_limit(
    journal_url: str, open_journal: OpenJournal
) -> None:
    buckets = [open_journal(journal_url).rate_limits for _ in range(4)]
    limit = RateLimit(calls=10, per_seconds=3600)

    def take(number: int) -> float:
        return buckets[number % 4].take("search", limit)

    with ThreadPoolExecutor(max_workers=8) as pool:
        waits = list(pool.map(take, range(30)))
    assert sum(wait == 0 for wait in waits) == 10


def test_in_memory_buckets_refill_over_time() -> None:
    now = [0.0]
    buckets = MemoryRateLimits(lambda: now[0])
    limit = RateLimit(calls=1, per_seconds=10)
    assert (buckets.take("k", limit), buckets.take("k", limit)) == (0.0, 10.0)
    now[0] = 5.0
    assert buckets.take("k", limit) == 5.0
    now[0] = 20.0
    assert buckets.take("k", limit) == 0.0


@tool(side_effects="idempotent", rate_limit=RateLimit(calls=5, per_seconds=3600))
async def book(slot: int) -> str:
    await anyio.sleep(0.01)
    return f"booked {slot}"


def bookings(first: int, count: int) -> list[ToolCall]:
    return [ToolCall(id=f"b{i}", name="book", arguments={"slot": i}) for i in range(first, first + count)]


def rate_limited(envelopes: list[AnyEnvelope]) -> int:
    return sum(isinstance(e, ErrorEnvelope) and e.error.code == "RATE_LIMITED" for e in envelopes)


async def test_concurrent_calls_get_exactly_the_limits_tokens(
    journal_url: str, open_journal: OpenJournal
) -> None:
    # 20 calls at once, their tokens taken with their intents in shared transactions (group commit)
    journal = open_journal(journal_url)
    answers = await Executor([book], journal=journal).execute_all(bookings(0, 20), Run(Principal("ada")))
    assert sum(a.ok for a in answers) == 5
    assert rate_limited(answers) == 15
    assert sorted(e.kind for e in journal.entries()) == ["intent"] * 5 + ["refusal"] * 15 + ["result"] * 5


async def test_concurrent_calls_from_executors_on_two_connections_share_the_limit(
    journal_url: str, open_journal: OpenJournal
) -> None:
    first = Executor([book], journal=open_journal(journal_url))
    second = Executor([book], journal=open_journal(journal_url))  # another worker: its own connections
    answers: list[AnyEnvelope] = []

    async def run(executor: Executor, calls: list[ToolCall]) -> None:
        answers.extend(await executor.execute_all(calls, Run(Principal("ada"))))

    async with anyio.create_task_group() as group:
        group.start_soon(run, first, bookings(0, 12))
        group.start_soon(run, second, bookings(12, 12))
    assert sum(a.ok for a in answers) == 5
    assert rate_limited(answers) == 19


async def test_a_call_a_quota_refuses_spends_no_token(journal_url: str, open_journal: OpenJournal) -> None:
    # the rate-limit guard runs after the quotas (its token is taken with the intent)
    executor = Executor([book], journal=open_journal(journal_url))
    capped = Run(Principal("ada"), max_calls=0)
    (refused,) = await executor.execute_all(bookings(0, 1), capped)
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.code == "QUOTA_EXCEEDED"
    answers = await executor.execute_all(bookings(1, 6), Run(Principal("ada")))
    assert sum(a.ok for a in answers) == 5  # all five tokens still there
