"""ARCHITECTURE.md shows the shape of the code: one picture naming every package, and one paragraph per package
(issue 13's "Done when"), so a new package cannot land undescribed."""

import re
from pathlib import Path

import tether

SRC = Path(tether.__file__).parent
DOC = (Path(__file__).parents[1] / "ARCHITECTURE.md").read_text(encoding="utf-8")
PUBLIC_MODULES = ("types", "exceptions", "envelopes")
"""Top-level modules that are layers of their own (`schemas` is described with `types`, which it exports)."""


def packages() -> list[str]:
    found = [p.parent.name for p in SRC.glob("*/__init__.py") if not p.parent.name.startswith("_")]
    return sorted(found + list(PUBLIC_MODULES))


def test_the_picture_names_every_package() -> None:
    picture = DOC.split("```")[1]
    assert [p for p in packages() if f"tether.{p}" not in picture] == []


def test_every_package_has_its_paragraph() -> None:
    described = set(re.findall(r"^\*\*`tether\.(\w+)`\*\*", DOC, flags=re.MULTILINE))
    assert [p for p in packages() if p not in described] == []
