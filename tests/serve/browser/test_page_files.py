"""The page ships inside the package as it runs: every file it loads is one of its own, nothing comes from
another site, and nothing needs a build step."""

from __future__ import annotations

import re
from importlib.resources import files

PAGE = files("tether.serve") / "page"


def _text(name: str) -> str:
    return (PAGE / name).read_text(encoding="utf-8")


def test_index_loads_only_files_of_the_page_by_relative_paths() -> None:
    index = _text("index.html")
    loaded = re.findall(r'<(?:script|link)\b[^>]*?(?:src|href)="(?!data:)([^"]+)"', index)
    assert sorted(loaded) == ["app.css", "app.js"]
    assert all((PAGE / name).is_file() for name in loaded)


def test_every_module_import_is_a_file_of_the_page() -> None:
    modules = [p.name for p in PAGE.iterdir() if p.name.endswith(".js")]
    imported = {name for module in modules for name in re.findall(r'from "\./([^"]+)"', _text(module))}
    assert imported == {"api.js", "render.js", "session.js"}
    assert imported <= set(modules)


def test_no_file_of_the_page_reaches_another_site() -> None:
    for page_file in PAGE.iterdir():
        text = page_file.read_text(encoding="utf-8")
        assert not re.search(r"(?:src|href)=\"(?:https?:)?//|@import|import\(\"http|from \"http", text), (
            page_file.name
        )


def test_the_content_security_policy_allows_this_server_only() -> None:
    policy = re.search(r'http-equiv="Content-Security-Policy"\s+content="([^"]+)"', _text("index.html"))
    assert policy
    directives = dict(d.strip().split(" ", 1) for d in policy[1].split(";"))
    assert directives["default-src"] == directives["script-src"] == directives["connect-src"] == "'self'"
    assert "'unsafe-inline'" not in policy[1]
