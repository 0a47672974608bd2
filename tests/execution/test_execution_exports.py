"""The exports of `tether.execution` and `tether.store` resolve (tests/test_public_api.py pins the lists)."""

from __future__ import annotations

from types import ModuleType

import pytest

import tether.execution
import tether.execution._guards
import tether.store
import tether.store.internal


@pytest.mark.parametrize(
    "module", [tether.execution, tether.execution._guards, tether.store, tether.store.internal]
)
def test_every_exported_name_resolves(module: ModuleType) -> None:
    names: list[str] = module.__all__  # kept sorted by ruff (RUF022)
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(module, name) is not None


def test_the_sql_journal_loads_on_first_use() -> None:
    from tether.store._sql import SqlJournal

    assert tether.store.SqlJournal is SqlJournal
    with pytest.raises(AttributeError):
        _ = tether.store.NoSuchThing
