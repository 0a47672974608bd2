"""Package boundaries: a package's `__init__` is all another package may import.

The rule, checked on the AST of every module under src/tether (imports inside functions and
`TYPE_CHECKING` blocks included, relative imports resolved):

    A private module (a dotted-path part starting with `_`, dunders aside) may be imported only from
    inside the package that directly contains it.

So `tether.store._sql` is for `tether.store.*` alone; `tether.execution._guards._why` (inside a private
subpackage) for `tether.execution.*`; in a public subpackage `tether.x.y._z` would be for `tether.x.y.*`
alone, not for `tether.x`. A top-level private module such as `tether._literals` belongs to the root
package `tether`: it is shared machinery every package of tether may use, and never part of the API a user
sees. `from tether.x import _y` counts as importing `tether.x._y`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tether

SRC = Path(tether.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def imported_modules(tree: ast.Module, importer: str, is_package: bool) -> list[str]:
    """Every module `importer` imports, as absolute dotted names; `from m import n` yields `m` and `m.n` (a
    submodule or a name: either way a private `_n` is another package's private part)."""
    package = importer if is_package else importer.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append(module)
            found += [f"{module}.{alias.name}" for alias in node.names if alias.name != "*"]
    return [name for name in found if name == "tether" or name.startswith("tether.")]


def owner_of_private(module: str) -> str | None:
    """The package that directly contains the first private part of `module`, or None if all parts are public."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if is_private(part):
            return ".".join(parts[:index])
    return None


def violations() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        importer = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for target in imported_modules(tree, importer, path.name == "__init__.py"):
            owner = owner_of_private(target)
            if owner is not None and importer != owner and not importer.startswith(owner + "."):
                private = target.split(".")[: owner.count(".") + 2]  # the private module, not its names
                found.add((importer, ".".join(private)))
    return found


def test_no_package_imports_another_packages_private_module() -> None:
    unexpected = sorted(violations())
    assert unexpected == [], "import these through the owning package's __init__ (export them there)"


def test_the_rule_catches_absolute_relative_and_from_package_imports() -> None:
    source = (
        "import tether.store._sql\n"
        "from tether.execution import _suggestions\n"
        "from .._literals import loads\n"
        "from ..store._redact import redact\n"
        "def lazy() -> None:\n"
        "    from tether.store._sessions import SessionStore\n"
    )
    imported = imported_modules(ast.parse(source), "tether.tools._validation", is_package=False)
    assert imported == [
        "tether.store._sql",
        "tether.execution",
        "tether.execution._suggestions",
        "tether._literals",
        "tether._literals.loads",
        "tether.store._redact",
        "tether.store._redact.redact",
        "tether.store._sessions",
        "tether.store._sessions.SessionStore",
    ]
    owners = {name: owner_of_private(name) for name in imported}
    assert owners["tether.execution"] is None
    assert owners["tether.execution._suggestions"] == "tether.execution"
    assert owners["tether._literals.loads"] == "tether"
    assert owners["tether.store._sessions.SessionStore"] == "tether.store"


def test_a_private_module_of_a_subpackage_is_private_to_that_subpackage() -> None:
    assert owner_of_private("tether.x.y._z") == "tether.x.y"
    assert owner_of_private("tether.x.y") is None
    assert owner_of_private("tether.execution._guards._why") == "tether.execution"


# What each package may import of tether's, lowest layer first: dependencies point down the pipeline and into
# the vocabulary. Packages not named here (new ones) are not constrained by this table.
LAYERS: dict[str, set[str]] = {
    "types": set(),
    "exceptions": set(),
    "_literals": {"types"},
    "_wire": {"types"},
    "envelopes": {"types", "exceptions"},
    "sandbox": {"types", "exceptions"},
    "store": {"types", "exceptions"},
    # tools -> mcp: a YAML tool bound to `mcp_server:` imports the MCP client on use (the `mcp` extra)
    "tools": {"types", "exceptions", "_literals", "sandbox", "mcp"},
    "dialects": {"types", "exceptions", "_literals", "_wire", "tools"},
    "models": {"types", "exceptions", "tools", "dialects"},
    "execution": {"types", "exceptions", "_wire", "envelopes", "store", "tools"},
    "builtin": {"types", "exceptions", "envelopes", "sandbox", "tools"},
    "mcp": {"types", "exceptions", "envelopes", "tools", "execution"},
    "loop": {
        "types",
        "exceptions",
        "envelopes",
        "_literals",
        "_wire",
        "tools",
        "dialects",
        "models",
        "execution",
        "store",
    },
}


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "tether"


def package_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        importer = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for target in imported_modules(tree, importer, path.name == "__init__.py"):
            if target == "tether":
                continue  # `from tether import envelopes` is listed again as `tether.envelopes`
            if package_of(target) != package_of(importer):
                found.setdefault(package_of(importer), set()).add(package_of(target))
    return found


def test_dependencies_point_down_and_nothing_imports_the_cli() -> None:
    imports = package_imports()
    upward = {
        package: sorted(imports.get(package, set()) & set(LAYERS).union({"cli"}) - allowed)
        for package, allowed in LAYERS.items()
    }
    assert {package: found for package, found in upward.items() if found} == {}


def test_tools_do_not_import_the_store() -> None:
    # regression: argument validation imported its redaction from tether.store, a layer above it
    assert "store" not in package_imports()["tools"]
