"""python.exec's job, run by `python3 -I -c` inside the sandbox (this file's text; tether never imports it).

It reads the job (code, input files, a marker, a byte budget) from stdin, as the Python literal tether
wrote with repr(), writes the input files in
its working directory (a private tmpfs), runs the code as `__main__` and, like a REPL, keeps the value of a
final expression. Whatever happens, it then lists the files the code left (iteratively, depth- and
count-capped, never following links, regular files only) and writes one result line to the stdout it was
given: the marker, then a Python literal (tether reads it with ast.literal_eval). So tether reads nothing
back from the sandbox's file system; the result is capped output like the rest, and the directory dies
with the sandbox. It imports nothing beyond what the interpreter has loaded already (json and ast would
double the start-up of `print(1)`): the AST comes from compile(), and JSON-ness is checked by hand.
"""

from __future__ import annotations

import _ast
import os
import stat
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs the job's start-up ~2 ms
if TYPE_CHECKING:
    from typing import Any

MAX_NESTING = 64
"""A return value nested deeper is returned as its repr."""
MAX_DEPTH = 16
MAX_ENTRIES = 2000
TEXT_BYTES = 64 * 1024


def main() -> None:
    job: dict[str, Any] = eval(sys.stdin.read(), {"__builtins__": {}})  # tether's repr() of the job
    inputs: dict[str, bytes] = {}
    for name, text in job["files"].items():
        data = text.encode()
        if os.path.dirname(name):
            os.makedirs(os.path.dirname(name), exist_ok=True)
        with open(name, "wb") as f:
            f.write(data)
        inputs[name] = data
    out = os.dup(1)
    home = os.getcwd()
    budget: int = job["budget"]
    result: dict[str, Any] = {"return_value": None}
    try:
        tree = compile(job["code"], "<code>", "exec", _ast.PyCF_ONLY_AST)
        assert isinstance(tree, _ast.Module)
        last = tree.body.pop() if tree.body else None
        if not isinstance(last, _ast.Expr):  # a final statement runs; only an expression's value is kept
            tree.body += [last] if last is not None else []
            last = None
        namespace = {"__name__": "__main__"}
        exec(compile(tree, "<code>", "exec"), namespace)
        if last is not None:
            value = eval(compile(_ast.Expression(last.value), "<code>", "eval"), namespace)
            try:
                value = jsonable(value, 0)
            except (TypeError, ValueError, RecursionError):
                value = repr(value)
            text = repr(value)
            if len(text) > budget:
                result["too_big"] = len(text)
            else:
                result["return_value"] = value
                budget -= len(text)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:  # noqa: SIM105  # contextlib would cost the job's start-up an import
                stream.flush()
            except Exception:  # the code may have closed or replaced them
                pass
        os.chdir(home)  # the code may have moved away
        result["artifacts"] = artifacts(inputs, budget)
        result["full"] = [p for p in (".", "/tmp", "/dev/shm") if job["sandboxed"] and is_full(p)]
        line = ("\n" + job["marker"] + repr(result)).encode()
        while line:
            line = line[os.write(out, line) :]


def jsonable(value: object, depth: int) -> object:
    """`value` as JSON would carry it (tuples as lists, keys as strings); raises TypeError if JSON cannot."""
    if depth > MAX_NESTING:
        raise ValueError("nested too deep")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("not a JSON number")
        return value
    if isinstance(value, list | tuple):
        return [jsonable(item, depth + 1) for item in value]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]  # any list
    if isinstance(value, dict):
        pairs: list[tuple[object, object]] = list(value.items())  # pyright: ignore[reportUnknownArgumentType]  # any dict
        return {key_text(key): jsonable(item, depth + 1) for key, item in pairs}
    raise TypeError(type(value).__name__)


def key_text(key: object) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    if isinstance(key, int | float):
        return repr(key)
    raise TypeError(type(key).__name__)


def artifacts(inputs: dict[str, bytes], budget: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = [("", 0)]
    seen = 0
    while stack and seen < MAX_ENTRIES:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder or "."), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            rel = f"{folder}/{entry.name}" if folder else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 < MAX_DEPTH:
                    stack.append((rel, depth + 1))
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            item, budget = describe(rel, st.st_size, inputs.get(rel), budget)
            if item is not None:
                found.append(item)
    return sorted(found, key=lambda item: item["path"])


def describe(rel: str, size: int, given: bytes | None, budget: int) -> tuple[dict[str, Any] | None, int]:
    """An artifact entry for `rel` (None for an input left as it was) and the budget left."""
    raw = b""
    readable = max(TEXT_BYTES, len(given or b""))
    if size <= readable:
        try:
            fd = os.open(rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                raw = f.read(readable + 1)
        except OSError:
            raw = b"\x00"
    if given is not None and raw == given:
        return None, budget
    content = None
    if size <= TEXT_BYTES and b"\x00" not in raw and len(raw) <= budget:
        content = raw.decode("utf-8", errors="replace")
        budget -= len(raw)
    return {"path": rel, "size": size, "content": content}, budget


def is_full(path: str) -> bool:
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return st.f_bavail == 0 or st.f_favail == 0


if __name__ == "__main__":
    main()
