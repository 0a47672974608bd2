"""The TypeScript types generated from the exported schemas (seed 004) are committed and cannot drift."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tether.schemas import SCHEMAS

TYPESCRIPT = Path(__file__).resolve().parents[1] / "schemas" / "typescript"
GENERATOR = TYPESCRIPT / "node_modules" / "json-schema-to-typescript"


def test_every_schema_has_its_committed_typescript_types() -> None:
    assert sorted(p.name for p in TYPESCRIPT.glob("*.d.ts")) == sorted(f"{name}.d.ts" for name in SCHEMAS)


@pytest.mark.skipif(
    os.environ.get("CI") != "true" and (shutil.which("node") is None or not GENERATOR.is_dir()),
    reason="the generator is not installed: `npm ci --prefix schemas/typescript` (CI runs it)",
)
def test_the_committed_typescript_types_are_what_the_generator_makes_of_the_schemas(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "CI needs node and `npm ci --prefix schemas/typescript` (.ci/run)"
    subprocess.run([node, str(TYPESCRIPT / "generate.mjs"), "--out", str(tmp_path)], check=True, timeout=120)
    for fresh in sorted(tmp_path.glob("*.d.ts")):
        committed = (TYPESCRIPT / fresh.name).read_text(encoding="utf-8")
        assert fresh.read_text(encoding="utf-8") == committed, (
            f"schemas/typescript/{fresh.name} is stale: run `npm run generate --prefix schemas/typescript`"
        )
