"""`tether serve`: agents over HTTP (the `serve` extra: FastAPI, uvicorn, sse-starlette).

    from tether.serve import create_app, load_config

    app = create_app(load_config("agents.yaml"))   # then: uvicorn, or `tether serve agents.yaml`

The agent API streams each run's events (seed 004's agent_streaming_events v1) as SSE or NDJSON from a
task the HTTP response only follows, so a client that reconnects loses nothing; see docs/serve.md. The
OpenAI-compatible endpoint (`/v1`, docs/openai.md) is part of `create_app`'s app; `openai_router` gives it
alone, for an app of your own. Not imported by `import tether`.
"""

from tether.serve._agents import default_agent as default_agent
from tether.serve._agents import served_agent as served_agent
from tether.serve._app import create_app as create_app
from tether.serve._config import AgentBuilder as AgentBuilder
from tether.serve._config import ApiKey as ApiKey
from tether.serve._config import ServeConfig as ServeConfig
from tether.serve._config import ServedAgent as ServedAgent
from tether.serve._config import default_database as default_database
from tether.serve._config import hash_key as hash_key
from tether.serve._config import load_config as load_config
from tether.serve._demo import DemoModel as DemoModel
from tether.serve._openai import AgentFactory as AgentFactory
from tether.serve._openai import openai_router as openai_router
from tether.serve._openai_upstream import Upstream as Upstream

__all__ = [
    "AgentBuilder",
    "AgentFactory",
    "ApiKey",
    "DemoModel",
    "ServeConfig",
    "ServedAgent",
    "Upstream",
    "create_app",
    "default_agent",
    "default_database",
    "hash_key",
    "load_config",
    "openai_router",
    "served_agent",
]
