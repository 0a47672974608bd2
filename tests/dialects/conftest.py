from collections.abc import Callable
from typing import Any

import pytest

from tether.dialects import ParseResult, parse, stream_parser

StreamCheck = Callable[..., ParseResult]


def _check(text: str, dialect: str, tools: Any = None) -> ParseResult:
    """Parse `text` whole, then fed in pieces of every size from 1 to 9; every result must be equal."""
    whole = parse(text, dialect, tools)
    for size in range(1, 10):
        p = stream_parser(dialect, tools)
        for i in range(0, len(text), size):
            p.feed(text[i : i + size])
        p.close()
        assert p.result == whole, f"split every {size} characters"
    return whole


@pytest.fixture
def check_stream() -> StreamCheck:
    return _check
