"""`tether ingest` and `tether search`: a knowledge base from the command line (the `knowledge` extra)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from tether.cli._errors import console

__all__ = ["register"]

IndexOption = Annotated[str, typer.Option("--index", help="The index: one store holds several.")]
NamespaceOption = Annotated[str, typer.Option("--namespace", help="A namespace within the index.")]
DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        envvar="TETHER_KNOWLEDGE_DB",
        help="The store: a SQLite file, or a postgresql:// URL of a shared one.",
    ),
]
BaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="An OpenAI-compatible server for openai: embedders.")
]


def register(app: typer.Typer) -> None:
    @app.command("ingest")
    def ingest(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        paths: Annotated[
            list[str], typer.Argument(help="Files and folders: .txt .md .csv (q,a) .pdf .html.")
        ],
        index: IndexOption = "default",
        namespace: NamespaceOption = "default",
        db: DbOption = "knowledge.db",
        embedder: Annotated[
            str | None,
            typer.Option(
                help="onnx:REPO_OR_FOLDER, openai:MODEL or wordllama (no download); without one, words only (BM25)."
            ),
        ] = None,
        base_url: BaseUrlOption = None,
        chunk_tokens: Annotated[int, typer.Option(help="Tokens per chunk.")] = 200,
        overlap: Annotated[int, typer.Option(help="Tokens each chunk shares with the one before.")] = 40,
    ) -> None:
        """Ingest files into a knowledge base; unchanged files are skipped.

        Changed files are replaced, files gone from an ingested folder are removed, and a file that cannot
        be read is reported while the rest go on."""
        from tether.knowledge import Chunking, KnowledgeBase, embedder_from_spec

        model = embedder_from_spec(embedder, base_url=base_url) if embedder else None
        kb = KnowledgeBase(db, embedder=model, chunking=Chunking(chunk_tokens, overlap), base_url=base_url)
        out = console()
        with Progress(
            TextColumn("ingesting"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
            console=console(stderr=True), transient=True,
        ) as bar:  # fmt: skip
            task = bar.add_task("", total=None)

            def progress(path: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total, description=path.rsplit("/", 1)[-1])

            report = kb.ingest(paths, index=index, namespace=namespace, progress=progress)
        kb.close()
        for path, why in report.failed.items():
            console(stderr=True).print(f"error: {path}: {why}")
        out.print(
            f"{len(report.ingested)} ingested ({report.chunks} chunks), {len(report.unchanged)} unchanged, "
            f"{len(report.removed)} removed, {len(report.failed)} failed; index {index!r}, namespace {namespace!r}"
        )
        if report.failed:
            raise typer.Exit(1)

    @app.command("search")
    def search(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        query: Annotated[str, typer.Argument(help="What to look for.")],
        index: IndexOption = "default",
        namespace: NamespaceOption = "default",
        db: DbOption = "knowledge.db",
        k: Annotated[int, typer.Option("--k", "-k", help="How many results.")] = 10,
        mode: Annotated[str, typer.Option(help="auto, lexical, vector or hybrid.")] = "auto",
        rerank: Annotated[
            bool, typer.Option("--rerank", help="Reorder the best hits with a cross-encoder.")
        ] = False,
        reranker: Annotated[
            str, typer.Option(help="The cross-encoder for --rerank: a Hugging Face repository or a folder.")
        ] = "cross-encoder/ms-marco-MiniLM-L-6-v2",
        vector_weight: Annotated[
            float | None,
            typer.Option(
                help="Hybrid search's weight on the vector side, 0 (words only) to 1 (meaning only); "
                "default: the weight chosen on the evaluation set (docs/knowledge.md)."
            ),
        ] = None,
        fusion: Annotated[
            str, typer.Option(help="How hybrid search fuses: convex (weighted scores) or rrf (ranks).")
        ] = "convex",
        base_url: BaseUrlOption = None,
    ) -> None:
        """Search a knowledge base; prints the best chunks as a table."""
        from tether.exceptions import UserError
        from tether.knowledge import VECTOR_WEIGHT, KnowledgeBase, OnnxReranker

        if mode not in ("auto", "lexical", "vector", "hybrid"):
            raise UserError(f"--mode is auto, lexical, vector or hybrid, not {mode!r}")
        if fusion not in ("convex", "rrf"):
            raise UserError(f"--fusion is convex or rrf, not {fusion!r}")
        kb = KnowledgeBase(
            db,
            reranker=OnnxReranker(reranker) if rerank else None,
            base_url=base_url,
            vector_weight=VECTOR_WEIGHT if vector_weight is None else vector_weight,
            fusion=fusion,
        )
        hits = kb.search(query, index=index, namespace=namespace, k=k, mode=mode, rerank=rerank)
        kb.close()
        table = Table("#", "rerank score" if rerank else "score", "file", "where", "content", box=None)
        for rank, hit in enumerate(hits, start=1):
            meta = hit.metadata
            where = (
                f"row {meta['row_number']}"
                if "row_number" in meta
                else f"{meta.get('chunkNumber')}/{meta.get('totalChunks')}"
            )
            content = " ".join(str(meta.get("content", "")).split())
            table.add_row(str(rank), f"{hit.score:.4f}", str(meta.get("filename", "")), where, content[:160])
        console().print(table if hits else "no results")
