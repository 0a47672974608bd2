"""The store's machinery for tether's own packages (the executor, the CLI): not user API.

Nothing here is covered by the 0.1 API (tests/test_public_api.py pins `tether.store`'s exports, not these):
names may change or go without notice. A user needs `tether.store` alone.

- `replays`, `resolution`, `writer_alive`: what the idempotency guard and `tether audit` decide with.
- `storable`, `storable_text`: any value or text made storable in every journal and sendable to every model
  API (the executor settles each envelope and argument with them).
- `JournalWriter`: how the executor writes to its journal: inline, in a thread, or concurrent calls' writes
  in one transaction (group commit, `SqlJournal.write_batch` of `Write`s).
- `OutcomeUnknown`: a write that failed at or after its commit, which nothing may write again.
- `RateToken`, `RateLimited`: a rate-limit token taken in the transaction that writes a call's intent
  (`SqlJournal.claim` and `append` with `take=`, when `SqlJournal.takes_rate_tokens`).
"""

from tether.store._entries import OutcomeUnknown as OutcomeUnknown
from tether.store._journal import replays as replays
from tether.store._journal import resolution as resolution
from tether.store._journal import writer_alive as writer_alive
from tether.store._journal_writer import JournalWriter as JournalWriter
from tether.store._rate_limits import RateLimited as RateLimited
from tether.store._rate_limits import RateToken as RateToken
from tether.store._rate_limits import Write as Write
from tether.store._storable import storable as storable
from tether.store._storable import storable_text as storable_text

__all__ = [
    "JournalWriter",
    "OutcomeUnknown",
    "RateLimited",
    "RateToken",
    "Write",
    "replays",
    "resolution",
    "storable",
    "storable_text",
    "writer_alive",
]
