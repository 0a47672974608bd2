"""A real `tether serve` worker for tests that need sockets: python server_child.py DATABASE_URL PORT GRACE_S.

Its agent `slow` streams 60 words, one every 50 ms; the key `k-alice` is alice's, limited to 5 requests a
minute (shared by every worker on the database).
"""

import sys

import uvicorn

from tether.execution import Principal
from tether.loop import Agent
from tether.models import ScriptedModel
from tether.serve import ApiKey, ServeConfig, ServedAgent, create_app, hash_key
from tether.store import Journal
from tether.types import RateLimit

WORDS = " ".join(f"w{i}" for i in range(60))


def build(principal: Principal, journal: Journal) -> Agent:
    return Agent(ScriptedModel([WORDS], chunk_size=4, delay_s=0.05), principal=principal)


database, port, grace = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
config = ServeConfig(
    agents=[ServedAgent("slow", build)],
    database=database,
    keys=[ApiKey(hash_key("k-alice"), "alice"), ApiKey(hash_key("k-bob"), "bob")],
    rate_limit=RateLimit(calls=int(sys.argv[4]) if len(sys.argv) > 4 else 1000, per_seconds=60),
    disconnect_grace_s=grace,
)
uvicorn.run(create_app(config), host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=3)
