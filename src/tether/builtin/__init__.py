"""Built-in tool packs, registered through the same extension point a third-party pack uses.

    from tether.builtin import PackConfig, build_tools

    tools = build_tools(["fs", "search", "exec"], PackConfig(roots=(Path("work"),), autoexec=True))

Packs: `fs` (ls, read, append, patch, write, mkdir, copy), `search` (lexical), `exec` (terminal.run, python.exec,
js.exec; off unless `autoexec`), `memory` (summarize, advise), `web` (wget, api_call). File paths are confined
to the configured roots (`Roots`); code runs in `tether.sandbox`. `agent_tools` builds an agent's tools from
definition files, packs and other toolsets, as the command line and `tether serve` do.
"""

# importing a pack's module registers it (register_pack, as a third-party pack does)
from tether.builtin._agent_tools import agent_tools as agent_tools
from tether.builtin._paths import Located as Located
from tether.builtin._paths import Roots as Roots
from tether.builtin._registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from tether.builtin._registry import PackConfig as PackConfig
from tether.builtin._registry import ToolPack as ToolPack
from tether.builtin._registry import build_tools as build_tools
from tether.builtin._registry import get_pack as get_pack
from tether.builtin._registry import packs as packs
from tether.builtin._registry import register_pack as register_pack
from tether.builtin.exec import exec_pack as exec_pack
from tether.builtin.fs import FsLimits as FsLimits
from tether.builtin.fs import fs_pack as fs_pack
from tether.builtin.memory import memory_pack as memory_pack
from tether.builtin.search import search_pack as search_pack
from tether.builtin.web import web_pack as web_pack

__all__ = [
    "ENTRY_POINT_GROUP",
    "FsLimits",
    "Located",
    "PackConfig",
    "Roots",
    "ToolPack",
    "agent_tools",
    "build_tools",
    "exec_pack",
    "fs_pack",
    "get_pack",
    "memory_pack",
    "packs",
    "register_pack",
    "search_pack",
    "web_pack",
]
