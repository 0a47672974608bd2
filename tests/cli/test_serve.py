"""`tether serve`: starts the API on the offline default agent, refuses to expose a keyless server to the
network, and reports a bad config as one line naming file and field."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from typer.testing import CliRunner

from tether.cli import app

runner = CliRunner()


def test_without_keys_serve_refuses_to_listen_beyond_loopback(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "--host", "0.0.0.0", "--db", f"sqlite:///{tmp_path / 'x.db'}"])
    assert result.exit_code == 2
    assert "--host 0.0.0.0 would let anyone on the network act as you" in result.output
    assert "keys:" in result.output


def test_a_bad_config_exits_2_naming_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text("agents:\n  - {name: a, model: tether:demo, termination: forever}\n", encoding="utf-8")
    result = runner.invoke(app, ["serve", str(path)])
    assert result.exit_code == 2
    assert f"{path}: agents[0].termination: Input should be" in result.output
    assert "Traceback" not in result.output


def test_serve_with_no_config_answers_on_the_embedded_default_agent(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    command = [sys.executable, "-m", "tether", "serve", "--port", str(port)]
    server = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        agents = None
        deadline = time.monotonic() + 60
        while agents is None and time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/agents", timeout=2) as response:
                    agents = json.loads(response.read())
            except OSError:
                time.sleep(0.2)
    finally:
        server.terminate()
        output = server.communicate(timeout=20)[0].decode()
    assert agents == [
        {
            "name": "demo",
            "description": "tether's offline demo: lists the files it may read. No model key needed.",
        }
    ]
    assert f"tether serve: demo at http://127.0.0.1:{port}/" in output
    assert (tmp_path / "data" / "tether" / "serve.db").is_file()
