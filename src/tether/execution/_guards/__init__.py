"""The guards a call passes, in this order, before its tool runs (see `tether.execution`).

The executor's machinery: a domain guard subclasses `tether.execution.Guard`, which is all of this a user needs.
"""

from tether.execution._guards._base import Attempt as Attempt
from tether.execution._guards._base import Guard as Guard
from tether.execution._guards._base import applies as applies
from tether.execution._guards._idempotency import IdempotencyGuard as IdempotencyGuard
from tether.execution._guards._idempotency import idempotency_key as idempotency_key
from tether.execution._guards._principal import PrincipalGuard as PrincipalGuard
from tether.execution._guards._quota import QuotaGuard as QuotaGuard
from tether.execution._guards._rate_limit import RateLimitGuard as RateLimitGuard
from tether.execution._guards._rate_limit import rate_limited as rate_limited
from tether.execution._guards._repaired import RepairedCallGuard as RepairedCallGuard
from tether.execution._guards._schema import SchemaGuard as SchemaGuard
from tether.execution._guards._unknown_tool import UnknownToolGuard as UnknownToolGuard
from tether.execution._guards._why import WhyGuard as WhyGuard
from tether.execution._guards._why import is_content_free as is_content_free

__all__ = [
    "Attempt",
    "Guard",
    "IdempotencyGuard",
    "PrincipalGuard",
    "QuotaGuard",
    "RateLimitGuard",
    "RepairedCallGuard",
    "SchemaGuard",
    "UnknownToolGuard",
    "WhyGuard",
    "applies",
    "idempotency_key",
    "rate_limited",
]
