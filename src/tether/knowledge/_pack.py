"""The `knowledge` tool pack: Kalygo's vectorSearch tools (seed 004), MOOLLM's search.vector (seed 001) and
Meowstik's search and file_ingest (seed 000), over one `KnowledgeBase`.

Registered through the public extension point, as a third-party pack: the `tether.tool_packs` entry point
names `KNOWLEDGE_PACK` (pyproject.toml), so `--pack knowledge` finds it. Its `PackConfig.options`:
`knowledge` (a `KnowledgeBase`, a store path or a `postgresql://` URL; default `TETHER_KNOWLEDGE_DB`, else
`knowledge.db` in the first root, where `tether ingest` writes by default), `knowledge_index` and
`knowledge_namespace` (both `default` unless given).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from tether.builtin import PackConfig, Roots, ToolPack, register_pack
from tether.exceptions import ToolError, UserError
from tether.tools import Tool, Toolset, specs_from_yaml, tool
from tether.types import ErrorCode, VectorSearchOutput, VectorSearchResult

from ._base import KnowledgeBase
from ._store import Hit

__all__ = ["KNOWLEDGE_PACK", "knowledge_tools"]

_SNIPPET = 300


def knowledge_tools(
    kb: KnowledgeBase,
    *,
    index: str = "default",
    namespace: str = "default",
    top_k: int = 5,
    roots: Sequence[str | os.PathLike[str]] = (),
    search_name: str = "search_docs",
    rerank_name: str = "search_rerank_docs",
) -> Toolset:
    """The knowledge tools over `kb`'s `index` and `namespace`.

    Args:
        top_k: How many results `vectorSearch` returns when the model does not say.
        roots: Folders `file_ingest` may read; without any, it is left out.
        search_name: The instance name of the `vectorSearch` tool (its `toolName` in call records).
        rerank_name: The instance name of the `vectorSearchWithReranking` tool (offered when `kb` has a
            reranker).
    """
    tools: list[Tool[..., Any]] = [_vector_search(kb, index, namespace, top_k, search_name, rerank=False)]
    if kb.reranker is not None:
        tools.append(_vector_search(kb, index, namespace, top_k, rerank_name, rerank=True))
    tools += [_search_vector(kb, index, namespace), _meowstik_search(kb, index, namespace)]
    if roots:
        tools.append(_file_ingest(kb, index, namespace, Roots(roots)))
    return Toolset(*tools)


def _output(
    hits: list[Hit], index: str, namespace: str, *, reranked: bool, scores: dict[str, float]
) -> dict[str, Any]:
    results = [
        VectorSearchResult.model_validate(
            {
                "id": h.id,
                "score": scores.get(h.id, h.score),
                "rerankScore": h.score if reranked else None,
                "metadata": h.metadata,
            }
        )
        for h in hits
    ]
    return VectorSearchOutput(results=results, namespace=namespace, index=index).model_dump(exclude_none=True)


def _vector_search(
    kb: KnowledgeBase, index: str, namespace: str, top_k: int, name: str, *, rerank: bool
) -> Tool[..., Any]:
    kind = "vectorSearchWithReranking" if rerank else "vectorSearch"

    @tool(side_effects="none", category="search")
    def search(query: str, topK: Annotated[int, Field(ge=1, le=50)] = top_k) -> dict[str, Any]:
        """Search the knowledge base for passages and Q&A that answer a question.

        Args:
            query: What to look for, in natural language.
            topK: How many results to return.
        """
        query = _query(query)
        if not rerank:
            return _output(
                kb.search(query, index=index, namespace=namespace, k=topK),
                index,
                namespace,
                reranked=False,
                scores={},
            )
        candidates = kb.search(query, index=index, namespace=namespace, k=max(topK, 20))
        retrieval = {h.id: h.score for h in candidates}
        return _output(kb.rerank(query, candidates)[:topK], index, namespace, reranked=True, scores=retrieval)

    description = search.spec.description + (
        " The best candidates are reordered by a cross-encoder." if rerank else ""
    )
    return search.with_spec(
        search.spec.model_copy(
            update={"name": name, "description": description, "metadata": {"toolType": kind}}
        )
    )


def _search_vector(kb: KnowledgeBase, index: str, namespace: str) -> Tool[..., Any]:
    spec = specs_from_yaml(
        files("tether.knowledge").joinpath("search_vector.yaml").read_text(encoding="utf-8")
    )[0]

    def search_vector(query: str, scope: str = "", k: int = 10) -> list[dict[str, Any]]:
        hits = _scoped(kb, _query(query), index, namespace, scope, k)
        return [{"path": h.source, "score": h.score, "snippet": _snippet(h)} for h in hits]

    return Tool(
        spec.model_copy(update={"side_effects": "none", "metadata": {"toolType": "search.vector"}}),
        search_vector,
    )


def _meowstik_search(kb: KnowledgeBase, index: str, namespace: str) -> Tool[..., Any]:
    @tool(name="search", side_effects="none", category="search")
    def search(
        query: str, scope: str = "", limit: Annotated[int, Field(ge=1, le=100)] = 10
    ) -> list[dict[str, Any]]:
        """Document search over the ingested knowledge base (words and meaning).

        Args:
            query: What to look for.
            scope: Only documents under this folder or file (as ingested); empty for all.
            limit: The most results to return.
        """
        hits = _scoped(kb, _query(query), index, namespace, scope, limit)
        return [{"id": h.id, "score": h.score, "path": h.source, "metadata": h.metadata} for h in hits]

    return search


def _file_ingest(kb: KnowledgeBase, index: str, namespace: str, box: Roots) -> Tool[..., Any]:
    @tool(name="file_ingest", side_effects="idempotent", category="knowledge")
    def file_ingest(path: str) -> dict[str, Any]:
        """Add a file (.txt, .md, .csv Q&A, .pdf, .html) to the knowledge base, replacing an earlier copy.

        Args:
            path: The file, relative to the workspace.
        """
        located = box.locate(path)
        fd = box.open_located(located, os.O_RDONLY, shown=path)
        with os.fdopen(fd, "rb") as f:
            data = f.read(kb.chunking.max_file_bytes + 1)
        try:
            chunks = kb.ingest_bytes(
                Path(path).name, data, source=str(located.path), index=index, namespace=namespace
            )
        except UserError as e:
            raise ToolError(
                ErrorCode.INVALID_ARGS,
                str(e),
                suggestion="ingest a UTF-8 .txt/.md, a q,a CSV, a PDF or HTML file",
            ) from None
        return {"path": box.display(located.path), "chunks": chunks, "namespace": namespace, "index": index}

    return file_ingest


def _scoped(kb: KnowledgeBase, query: str, index: str, namespace: str, scope: str, k: int) -> list[Hit]:
    if not scope.strip("/ ."):
        return kb.search(query, index=index, namespace=namespace, k=k)
    wanted = scope.strip("/")
    hits = kb.search(query, index=index, namespace=namespace, k=max(k * 10, 100))
    inside = [h for h in hits if f"/{wanted}/" in f"{h.source}/" or h.source.endswith(f"/{wanted}")]
    return inside[:k]


def _query(query: str) -> str:
    if not query.strip():
        raise ToolError(
            ErrorCode.INVALID_ARGS, "query must not be empty", suggestion='e.g. "What is Ollama?"'
        )
    return query


def _snippet(hit: Hit) -> str:
    content = str(hit.metadata.get("content", ""))
    return content if len(content) <= _SNIPPET else content[: _SNIPPET - 1] + "…"


def _build(config: PackConfig) -> Toolset:
    given = config.options.get("knowledge")
    if isinstance(given, KnowledgeBase):
        kb = given
    else:
        default = (
            os.environ.get("TETHER_KNOWLEDGE_DB")
            or (config.roots[0] if config.roots else Path()) / "knowledge.db"
        )
        kb = KnowledgeBase(given if isinstance(given, str | Path) else default)
    return knowledge_tools(
        kb,
        index=str(config.options.get("knowledge_index", "default")),
        namespace=str(config.options.get("knowledge_namespace", "default")),
        roots=config.roots,
    )


KNOWLEDGE_PACK = register_pack(
    ToolPack("knowledge", _build, "Knowledge: vectorSearch (search_docs), search.vector, search, file_ingest")
)
