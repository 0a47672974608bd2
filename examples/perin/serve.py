"""Serve the Perin assistant to tether's web chat page: `python examples/perin/serve.py`, then open
http://127.0.0.1:8700/ and ask "Set a 30-minute meeting with Aviad tomorrow between 12:00-14:00 Israel time".

You are Dana (the server's local user: no API keys, loopback only), connected to Aviad, who is busy 12:30-13:00
that day. With `--live` the planner and responder are real models (`PERIN_PLANNER`, default
`openai:gpt-4o-mini`, and `PERIN_RESPONDER`, default `openai:gpt-4o`; OPENAI_API_KEY must be set) and "now"
is the real time; without it each run replays the recorded scenario beside this file (planner.jsonl,
responder.jsonl) with the clock at 26 March 2026, 09:00 in Israel, and no key or network is needed.
Needs the serve and perin extras: pip install 'tether[serve,perin]'.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import uvicorn

from tether.models import Model, load_cassette
from tether.packs.perin import Network, PerinMetrics, perin_served_agent
from tether.serve import ServeConfig, create_app

HERE = Path(__file__).resolve().parent
ISRAEL = ZoneInfo("Asia/Jerusalem")
RECORDED_NOW = datetime(2026, 3, 26, 9, tzinfo=ISRAEL)


def replay(name: str) -> Model:
    """A fresh replay of the recorded model for each run."""
    return load_cassette(HERE / f"{name}.jsonl")[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="real models and the real clock")
    parser.add_argument("--db", default=None, help="database URL (default: a new SQLite file)")
    parser.add_argument("--port", type=int, default=8700)
    args = parser.parse_args()
    database = args.db or f"sqlite:///{Path(tempfile.mkdtemp(prefix='perin-')) / 'perin.db'}"
    now = (lambda: datetime.now(UTC)) if args.live else (lambda: RECORDED_NOW)
    network = Network(database, clock=now)
    if network.user("local") is None:
        dana = network.add_user("Dana Levi", "dana@example.com", "Asia/Jerusalem", user_id="local")
        aviad = network.add_user("Aviad Cohen", "aviad@example.com", "Asia/Jerusalem")
        network.connect(dana, aviad)
        tomorrow = (now().astimezone(ISRAEL) + timedelta(days=1)).replace(
            hour=12, minute=30, second=0, microsecond=0
        )
        network.add_busy(aviad, tomorrow, tomorrow + timedelta(minutes=30), "Dentist")
    if args.live:
        planner = os.environ.get("PERIN_PLANNER", "openai:gpt-4o-mini")
        responder = os.environ.get("PERIN_RESPONDER", "openai:gpt-4o")
        agent = perin_served_agent(network, planner=planner, responder=responder, recorders=(PerinMetrics(),))
    else:
        agent = perin_served_agent(
            network, planner=lambda: replay("planner"), responder=lambda: replay("responder")
        )
    app = create_app(ServeConfig(agents=[agent], database=database))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
