"""OS isolation for code-running tools: bubblewrap namespaces, no capabilities, seccomp, rlimits, timeouts.

from tether.sandbox import Sandbox, SandboxLimits

result = Sandbox("work", limits=SandboxLimits(timeout_s=5)).run(["python3", "-c", "print(2 + 2)"])
result.stdout  # "4\\n"
"""

from tether.exceptions import SandboxUnavailable as SandboxUnavailable

from ._bwrap import WORKSPACE as WORKSPACE
from ._cgroup import CgroupSupport as CgroupSupport
from ._cgroup import cgroup_support as cgroup_support
from ._host import HostCheck as HostCheck
from ._host import check_host as check_host
from ._limits import SandboxLimits as SandboxLimits
from ._limits import SandboxResult as SandboxResult
from ._refusals import result_data as result_data
from ._refusals import run_for_tool as run_for_tool
from ._refusals import tails as tails
from ._sandbox import Sandbox as Sandbox
from ._sandbox import SandboxProcess as SandboxProcess

__all__ = [
    "WORKSPACE",
    "CgroupSupport",
    "HostCheck",
    "Sandbox",
    "SandboxLimits",
    "SandboxProcess",
    "SandboxResult",
    "SandboxUnavailable",
    "cgroup_support",
    "check_host",
    "result_data",
    "run_for_tool",
    "tails",
]
