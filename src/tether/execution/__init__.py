"""Running tool calls safely: guards, then the tool under a timeout, recorded in a journal.

Every call gets exactly one envelope. Before its tool runs a call passes these guards, in this order;
the first that refuses answers the call:

1. unknown tool         -> `UNKNOWN_TOOL`, suggesting the closest names
2. schema validation    -> `INVALID_ARGS`, listing every problem with its JSON path (safe coercions applied)
3. `why`                -> `MISSING_WHY` when the tool requires one and it is missing, empty or content-free
4. principal and scopes -> `UNAUTHORIZED`, `SCOPES_MISSING`
   then domain guards given to the `Executor` (e.g. `CONNECTION_INACTIVE`), except for a call the journal
   will answer (a repeat whose result replays: the idempotency guard below answers it, and nothing runs)
5. run quotas           -> `QUOTA_EXCEEDED` (calls, output bytes, wall time per `Run`)
6. repaired-call policy -> `INVALID_ARGS` for a repaired call to a mutating tool (by default)
7. rate limit           -> `RATE_LIMITED` with `details.retry_after_s` (token bucket per tool and principal,
                           in memory or in the journal's database, shared by every executor using it; there
                           the token is taken in the transaction that writes the call's intent, with the
                           idempotency claim, so a call a quota or the repaired-call policy refuses spends
                           no token; until issue 13 this guard ran before the quotas)
8. idempotency          -> the recorded envelope for a repeat of a success (a `needs` or error answer runs
                           again); `CONFLICT` for a duplicate still running, a call sharing only its
                           `idempotency_fields` with a completed one, or a mutating call left in doubt by a
                           crash (read-only tools are keyed only if they declare `idempotency_fields`)

Then the journal gets an intent entry, the tool runs (async: awaited; sync: in a thread;
`isolation="process"`: in a child process killed with its group on timeout), and the journal gets the
result: `TIMEOUT`, the tool's own `ToolError` or `NeedsInput`, or `INTERNAL` with the traceback kept there
(a tool's `sys.exit()` or `KeyboardInterrupt` included). Every result is made storable first
(`tether.store.internal.storable`), so no output of a tool can leave its call in doubt.
"""

from tether.execution._decisions import Allow as Allow
from tether.execution._decisions import Decision as Decision
from tether.execution._decisions import Refuse as Refuse
from tether.execution._decisions import Replay as Replay
from tether.execution._decisions import refusal as refusal
from tether.execution._executor import Executor as Executor
from tether.execution._guards import Attempt as Attempt
from tether.execution._guards import Guard as Guard
from tether.execution._guards import idempotency_key as idempotency_key
from tether.execution._policy import Policy as Policy
from tether.execution._policy import RepairedCallPolicy as RepairedCallPolicy
from tether.execution._records import CallReport as CallReport
from tether.execution._records import Recorder as Recorder
from tether.execution._run import Principal as Principal
from tether.execution._run import Run as Run
from tether.execution._session_log import SessionLog as SessionLog

__all__ = [
    "Allow",
    "Attempt",
    "CallReport",
    "Decision",
    "Executor",
    "Guard",
    "Policy",
    "Principal",
    "Recorder",
    "Refuse",
    "RepairedCallPolicy",
    "Replay",
    "Run",
    "SessionLog",
    "idempotency_key",
    "refusal",
]
