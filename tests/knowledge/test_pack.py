"""The knowledge tools: seed 004's vectorSearch records, MOOLLM's search.vector, Meowstik's search and
file_ingest, through the real executor and agent loop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from tether import Agent, Executor, ScriptedModel, ToolCall
from tether.builtin import PackConfig, build_tools, get_pack
from tether.knowledge import KNOWLEDGE_PACK, KnowledgeBase, OnnxReranker, knowledge_tools
from tether.types import ChainEndEvent, VectorSearchOutput

from .onnx_models import build_scorer


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    docs = tmp_path / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / "guides" / "ollama_guide.md").write_text(
        "---\nvideo_title: What is Ollama?\n---\nOllama is an open-source tool to run language models locally."
    )
    (docs / "faq.csv").write_text("q,a\nWhat is the pricing for the Pro plan?,The Pro plan costs $29/month\n")
    kb = KnowledgeBase(tmp_path / "k.db")
    kb.ingest([docs], index="knowledge-base", namespace="docs")
    return kb


def run(tools: Any, call: ToolCall) -> Any:
    return anyio.run(Executor(tools).execute, call)


def test_vector_search_answers_with_seed_004_output_and_its_call_record_says_vector_search(
    kb: KnowledgeBase,
) -> None:
    tools = knowledge_tools(kb, index="knowledge-base", namespace="docs")
    turn = (
        '<tool_call>{"name": "search_docs", "arguments": {"query": "What is Ollama?", "topK": 5}}</tool_call>'
    )
    result = anyio.run(
        Agent(ScriptedModel([turn, "Ollama runs models locally."]), tools, dialect="hermes").run, "?"
    )
    end = result.events[-1]
    assert isinstance(end, ChainEndEvent)
    [record] = end.toolCalls
    assert (record.toolType, record.toolName, record.input) == (
        "vectorSearch",
        "search_docs",
        {"query": "What is Ollama?", "topK": 5},
    )
    output = VectorSearchOutput.model_validate(record.output)
    assert (output.namespace, output.index) == ("docs", "knowledge-base")
    top: dict[str, Any] = record.output["results"][0]
    assert set(top) == {"id", "score", "metadata"}
    assert top["metadata"]["filename"] == "ollama_guide.md"
    assert top["metadata"]["file_video_title"] == "What is Ollama?"


def test_vector_search_with_reranking_reports_both_scores_ordered_by_the_reranker(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    vocabulary = ["pro", "plan", "ollama", "pricing"]
    weights = np.zeros(len(vocabulary) + 2, dtype=np.float32)
    weights[vocabulary.index("pricing") + 2] = 3.0
    kb.reranker = OnnxReranker(build_scorer(tmp_path / "scorer", vocabulary, weights))
    tools = knowledge_tools(kb, index="knowledge-base", namespace="docs")
    assert tools.tools()["search_rerank_docs"].spec.metadata == {"toolType": "vectorSearchWithReranking"}
    data = run(
        tools, ToolCall(id="c1", name="search_rerank_docs", arguments={"query": "Ollama pricing", "topK": 2})
    ).data
    results = data["results"]
    assert [r["metadata"]["filename"] for r in results] == ["faq.csv", "ollama_guide.md"]
    assert [r["rerankScore"] for r in results] == sorted((r["rerankScore"] for r in results), reverse=True)
    assert all(isinstance(r["score"], float) for r in results)


def test_moollm_search_vector_comes_from_its_yaml_and_requires_why(kb: KnowledgeBase) -> None:
    tools = knowledge_tools(kb, index="knowledge-base", namespace="docs")
    spec = tools.tools()["search.vector"].spec
    assert (spec.requires_why, spec.category, spec.side_effects) == (True, "search", "none")
    refused = run(tools, ToolCall(id="c1", name="search.vector", arguments={"query": "Ollama"}))
    assert refused.error.code == "MISSING_WHY"
    call = ToolCall(
        id="c2",
        name="search.vector",
        arguments={"query": "Ollama", "scope": "guides", "k": 3},
        why="Find the guide",
    )
    [hit] = run(tools, call).data
    assert hit["path"].endswith("docs/guides/ollama_guide.md")
    assert hit["snippet"].startswith("Ollama is")
    outside = ToolCall(
        id="c3", name="search.vector", arguments={"query": "pricing", "scope": "guides"}, why="Only guides"
    )
    assert run(tools, outside).data == []


def test_meowstik_search_takes_query_scope_and_limit(kb: KnowledgeBase) -> None:
    tools = knowledge_tools(kb, index="knowledge-base", namespace="docs")
    data = run(
        tools,
        ToolCall(id="c1", name="search", arguments={"query": "Pro plan pricing", "scope": "", "limit": 1}),
    ).data
    assert len(data) == 1
    assert data[0]["metadata"]["q"] == "What is the pricing for the Pro plan?"
    empty = run(tools, ToolCall(id="c2", name="search", arguments={"query": "  "}))
    assert (empty.error.code, empty.error.recoverable) == ("INVALID_ARGS", True)


def test_file_ingest_adds_a_file_from_the_roots_and_refuses_paths_outside_them(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("The launch is planned for Thursday.")
    (tmp_path / "secret.txt").write_text("the password is hunter2")
    (work / "link.txt").symlink_to(tmp_path / "secret.txt")
    (work / "blob.txt").write_bytes(b"\x00\x01")
    tools = knowledge_tools(kb, index="knowledge-base", namespace="docs", roots=[work])
    done = run(tools, ToolCall(id="c1", name="file_ingest", arguments={"path": "notes.md"}))
    assert done.data == {"path": "notes.md", "chunks": 1, "namespace": "docs", "index": "knowledge-base"}
    assert (
        kb.search("launch Thursday", index="knowledge-base", namespace="docs")[0].metadata["filename"]
        == "notes.md"
    )
    again = kb.ingest([work / "notes.md"], index="knowledge-base", namespace="docs")
    assert again.unchanged == [
        str(work / "notes.md")
    ]  # the same file, ingested either way, is the same source
    for attack in ["../secret.txt", str(tmp_path / "secret.txt"), "link.txt", "notes.md/../../secret.txt"]:
        refused = run(tools, ToolCall(id="c2", name="file_ingest", arguments={"path": attack}))
        assert refused.error.code == "PERMISSION_DENIED", attack
    assert kb.search("password hunter2", index="knowledge-base", namespace="docs") == []
    bad = run(tools, ToolCall(id="c3", name="file_ingest", arguments={"path": "blob.txt"}))
    assert bad.error.code == "INVALID_ARGS"
    assert "binary" in bad.error.message


def test_the_pack_registers_through_the_public_extension_point(kb: KnowledgeBase, tmp_path: Path) -> None:
    assert get_pack("knowledge") is KNOWLEDGE_PACK
    config = PackConfig(
        roots=(tmp_path,),
        options={"knowledge": kb, "knowledge_index": "knowledge-base", "knowledge_namespace": "docs"},
    )
    tools = build_tools(["knowledge"], config)
    assert set(tools.names()) == {"search_docs", "search.vector", "search", "file_ingest"}
    data = run(tools, ToolCall(id="c1", name="search_docs", arguments={"query": "Ollama"})).data
    assert json.dumps(data)
    assert data["index"] == "knowledge-base"


def test_importing_the_knowledge_package_loads_no_optional_dependency() -> None:
    heavy = (
        "('numpy', 'onnxruntime', 'tokenizers', 'openai', 'pypdf', 'bs4', 'bpe_openai', 'huggingface_hub')"
    )
    code = f"import sys, tether.knowledge; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
