"""Registers tether's built-in dialects through the public extension point, as a plugin would."""

from __future__ import annotations

from tether.dialects._registry import register_dialect
from tether.dialects.hermes import Hermes
from tether.dialects.pythonic import Olmo3Pythonic, Pythonic

for _dialect in (Hermes(), Pythonic(), Olmo3Pythonic()):
    register_dialect(_dialect)
