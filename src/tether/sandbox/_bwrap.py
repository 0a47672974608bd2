"""The bubblewrap command line: a minimal read-only root, a private workspace, fresh namespaces."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tether.exceptions import SandboxUnavailable

__all__ = ["WORKSPACE", "BwrapPlan", "find_bwrap", "probe"]

WORKSPACE = "/workspace"
"""Where the workspace appears inside the sandbox."""

# Top-level directories that merged-/usr systems make symlinks into /usr; older systems have them as dirs.
_ROOT_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The few files of /etc that dynamic linking, `id`, `ls -l` and Debian's alternatives need. No secrets.
_ETC = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
)
# Only with the network on: name resolution and TLS roots.
_ETC_NET = ("/etc/resolv.conf", "/etc/hosts", "/etc/gai.conf", "/etc/ssl", "/etc/ca-certificates")


@cache
def find_bwrap() -> str | None:
    """The path of the `bwrap` executable, or `None`."""
    return shutil.which("bwrap")


@dataclass(frozen=True, kw_only=True, slots=True)
class BwrapPlan:
    """Everything that goes on one bwrap command line."""

    bwrap: str
    uid: int
    workspace: str | None
    """Host path bound at `WORKSPACE`; `None` for a private tmpfs of `workspace_bytes` there instead."""
    chdir: str
    network: bool
    tmp_bytes: int
    seccomp_fd: int | None
    ro_binds: Sequence[tuple[str, str]] = ()
    """Extra read-only binds as (host path, destination)."""
    workspace_bytes: int = 0
    read_only: bool = False
    """Bind the workspace read-only (for helpers that only read it, e.g. ripgrep for search)."""
    info_fd: int | None = None
    """bubblewrap writes the sandbox's init pid here (`--info-fd`), as JSON."""
    zygote: bool = False
    """For a zygote (`_inside.py`): uid 0 of the new user namespace with its capabilities, so that it can
    make the spares' namespaces and mounts; every spare drops to `uid` with none before it runs anything.
    No seccomp filter (each run loads it) and no `--disable-userns` (each spare forbids user namespaces
    itself, which bubblewrap's nested namespace would otherwise keep it from mounting `/proc`)."""

    def argv(self, command: Sequence[str]) -> list[str]:
        args = [self.bwrap, "--ro-bind", "/usr", "/usr"]
        for link in _ROOT_LINKS:
            if os.path.islink(link):
                args += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                args += ["--ro-bind", link, link]
        for path in _ETC + (_ETC_NET if self.network else ()):
            if os.path.exists(path):
                args += ["--ro-bind", path, path]
        # --dev's tmpfs has no size: made read-only, with /dev/shm a capped tmpfs of its own (RAM-backed
        # space a sandbox could otherwise fill without bound)
        args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev"]
        args += ["--size", str(self.tmp_bytes), "--tmpfs", "/dev/shm"]
        args += ["--size", str(self.tmp_bytes), "--tmpfs", "/tmp"]
        for source, dest in self.ro_binds:  # after /tmp's tmpfs, which would hide a bind below /tmp
            args += ["--ro-bind", source, dest]
        if self.workspace is None:
            args += ["--size", str(self.workspace_bytes), "--perms", "0700", "--tmpfs", WORKSPACE]
        else:
            args += ["--ro-bind" if self.read_only else "--bind", self.workspace, WORKSPACE]
        args += ["--remount-ro", "/", "--chdir", self.chdir]
        args += ["--unshare-all", "--unshare-user"]
        if not self.zygote:
            args.append("--disable-userns")
        if self.network:
            args.append("--share-net")
        if self.zygote:
            args += ["--uid", "0", "--gid", "0", "--cap-add", "ALL"]
        else:
            args += ["--uid", str(self.uid), "--gid", str(self.uid), "--cap-drop", "ALL"]
        args += ["--hostname", "sandbox", "--die-with-parent", "--new-session"]
        if self.seccomp_fd is not None:
            args += ["--seccomp", str(self.seccomp_fd)]
        if self.info_fd is not None:
            args += ["--info-fd", str(self.info_fd)]
        return [*args, "--", *command]


def probe(bwrap: str, uid: int, run_as: int | None) -> None:
    """Start one empty sandbox so that a host without user namespaces fails early and clearly.

    Raises:
        SandboxUnavailable: naming what failed.
    """
    _probe(bwrap, uid, run_as)


@cache
def _probe(bwrap: str, uid: int, run_as: int | None) -> None:
    plan = BwrapPlan(
        bwrap=bwrap, uid=uid, workspace="/usr", chdir="/", network=False, tmp_bytes=1 << 20, seccomp_fd=None
    )
    try:
        done = subprocess.run(
            plan.argv([_true()]),
            capture_output=True,
            timeout=10,
            check=False,
            env={"PATH": "/usr/bin:/bin"},
            user=run_as,
            group=run_as,
            extra_groups=None if run_as is None else [],
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(f"bubblewrap could not start a sandbox: {exc}") from exc
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise SandboxUnavailable(
            f"bubblewrap could not start a sandbox here ({reason}). Enable unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0) "
            "or run where they are allowed."
        )


def _true() -> str:
    return next((p for p in ("/usr/bin/true", "/bin/true") if Path(p).exists()), "true")
