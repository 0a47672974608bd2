"""Every BFCL function doc in the shared corpus converts to valid JSON Schema that tether can compile."""

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from tether.tools import Tool, from_bfcl


def _distinct_docs(files: list[Path], *, one_doc_per_line: bool = False) -> dict[str, dict[str, Any]]:
    docs: dict[str, dict[str, Any]] = {}
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            for fn in [entry] if one_doc_per_line else entry.get("function") or []:
                docs[json.dumps(fn, sort_keys=True)] = fn
    return docs


def test_all_bfcl_question_function_docs_convert_to_valid_json_schema(corpora_dir: Path) -> None:
    data = corpora_dir / "bfcl" / "data"
    question_files = [p for p in sorted(data.glob("BFCL_v4_*.json")) if "format_sensitivity" not in p.name]
    docs = _distinct_docs(question_files)
    assert len(docs) == 3258  # the count bfcl/README.md gives for the v4 question files
    for doc in docs.values():
        spec = from_bfcl(doc)
        Draft202012Validator.check_schema(spec.input_schema)
        Tool(spec).compile()
        assert list(spec.input_schema["properties"]) == list(doc["parameters"].get("properties", {}))


def test_multi_turn_class_docs_convert_too(corpora_dir: Path) -> None:
    docs = _distinct_docs(
        sorted((corpora_dir / "bfcl" / "data" / "multi_turn_func_doc").glob("*.json")), one_doc_per_line=True
    )
    assert docs
    for doc in docs.values():
        Draft202012Validator.check_schema(from_bfcl(doc).input_schema)


def test_bfcl_type_names_map_to_json_schema() -> None:
    spec = from_bfcl(
        {
            "name": "Geometry.area",
            "description": "d",
            "parameters": {
                "type": "dict",
                "properties": {
                    "radius": {"type": "float"},
                    "point": {"type": "tuple", "items": {"type": "integer"}},
                    "anything": {"type": "any"},
                    "name": {"type": "String"},
                    "table": {"type": "HashMap"},
                    "ids": {"type": "ArrayList", "items": {"type": "long"}},
                },
                "required": ["radius"],
            },
        }
    )
    assert spec.input_schema == {
        "type": "object",
        "properties": {
            "radius": {"type": "number"},
            "point": {"type": "array", "items": {"type": "integer"}},
            "anything": {},
            "name": {"type": "string"},
            "table": {"type": "object"},
            "ids": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["radius"],
    }
