"""Pluggable embedders and rerankers: local ONNX models, or any OpenAI-compatible `/v1/embeddings`.

    OnnxEmbedder("sentence-transformers/all-MiniLM-L6-v2")   downloaded from the Hugging Face Hub on first
                                                             use, cached, then loaded from the cache
    OnnxEmbedder("/models/my-model")                         a folder holding model.onnx + tokenizer.json
    OnnxReranker("cross-encoder/ms-marco-MiniLM-L-6-v2")     a cross-encoder, the same way
    OpenAIEmbedder("text-embedding-3-small", base_url=...)   OpenAI, Ollama, vLLM, llama.cpp, ...

`embedder_from_spec("onnx:NAME" | "openai:NAME")` makes one from the string a store records per index.
Every embedder returns L2-normalised float32 rows, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from tether.exceptions import ModelError, UserError

from ._tokens import HfTokenizer, Tokenizer

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["Embedder", "OnnxEmbedder", "OnnxReranker", "OpenAIEmbedder", "Reranker", "embedder_from_spec"]


class Embedder(Protocol):
    """Turns texts into vectors."""

    @property
    def name(self) -> str:
        """How to make this embedder again (`onnx:...`, `openai:...`): stores record it per index."""
        ...

    @property
    def tokenizer(self) -> Tokenizer | None:
        """The model's own tokenizer, to chunk by its tokens; None to use the default."""
        ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One L2-normalised row per text."""
        ...


class Reranker(Protocol):
    """Scores how well each text answers a query (a cross-encoder); higher is better."""

    @property
    def name(self) -> str: ...

    def score(self, query: str, texts: Sequence[str]) -> list[float]: ...


class _OnnxModel:
    """An ONNX model and its `tokenizer.json`, from a folder or a Hugging Face repository (cached)."""

    def __init__(self, model: str | Path, file: str, cache_dir: str | Path | None, max_tokens: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer as HfModel

        folder = _model_folder(str(model), file, cache_dir)
        self.tokenizer: Any = HfModel.from_file(str(folder / "tokenizer.json"))  # partly untyped stubs
        runtime: Any = onnxruntime  # untyped
        options = runtime.SessionOptions()
        options.intra_op_num_threads = min(4, os.cpu_count() or 1)
        self.session: Any = runtime.InferenceSession(
            str(folder / file), options, providers=["CPUExecutionProvider"]
        )
        self.inputs: set[str] = {str(i.name) for i in self.session.get_inputs()}
        self.max_tokens = max_tokens

    def run(self, encodings: list[Any]) -> tuple[Any, Any]:
        """The model's first output and the attention mask, for encoded texts."""
        import numpy as np

        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        output = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        return output, mask

    def encode(self, items: list[Any]) -> list[Any]:
        self.tokenizer.enable_truncation(self.max_tokens)
        pad = self.tokenizer.token_to_id("[PAD]") or self.tokenizer.token_to_id("<pad>") or 0
        self.tokenizer.enable_padding(pad_id=pad)
        return self.tokenizer.encode_batch(items)


class OnnxEmbedder:
    """A sentence-embedding model run locally with onnxruntime (mean or CLS pooling)."""

    def __init__(
        self,
        model: str | Path = "sentence-transformers/all-MiniLM-L6-v2",
        *,
        file: str = "onnx/model.onnx",
        pooling: Literal["mean", "cls"] = "mean",
        cache_dir: str | Path | None = None,
        max_tokens: int = 256,
        batch_size: int = 32,
    ) -> None:
        """Load `model`: a local folder, or a Hugging Face repository downloaded on first use and cached.

        Args:
            model: A folder with `file` and `tokenizer.json`, or a repository id such as
                `sentence-transformers/all-MiniLM-L6-v2` or `BAAI/bge-small-en-v1.5`.
            file: The ONNX file's path inside the folder or repository.
            pooling: How token vectors become one: their mean (sentence-transformers) or the first (BGE).
            cache_dir: Where downloads are kept (default: the Hugging Face cache, `HF_HOME`).
            max_tokens: Longer texts are truncated to this many tokens.
            batch_size: Texts per model run.
        """
        self.name = f"onnx:{model}" + ("" if file == "onnx/model.onnx" else f"#{file}")
        self._model = _OnnxModel(model, file, cache_dir, max_tokens)
        self._pooling = pooling
        self._batch = batch_size
        self.tokenizer: Tokenizer | None = HfTokenizer(self._model.tokenizer, name=str(model))

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        rows: list[NDArray[np.float32]] = []
        for start in range(0, len(texts), self._batch):
            output, mask = self._model.run(self._model.encode(list(texts[start : start + self._batch])))
            if output.ndim == 2:  # the model pools itself
                pooled = output
            elif self._pooling == "cls":
                pooled = output[:, 0]
            else:
                weights = mask[..., None].astype(np.float32)
                pooled = (output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            rows.append(_normalised(pooled))
        return np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)


class OnnxReranker:
    """A cross-encoder run locally with onnxruntime: (query, text) pairs in, one relevance logit out."""

    def __init__(
        self,
        model: str | Path = "cross-encoder/ms-marco-MiniLM-L-6-v2",
        *,
        file: str = "onnx/model.onnx",
        cache_dir: str | Path | None = None,
        max_tokens: int = 512,
    ) -> None:
        """Load `model` as `OnnxEmbedder` does."""
        self.name = f"onnx:{model}"
        self._model = _OnnxModel(model, file, cache_dir, max_tokens)

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        output, _ = self._model.run(self._model.encode([(query, text) for text in texts]))
        logits = output.reshape(len(texts), -1)[:, 0]
        return [float(v) for v in logits]


class OpenAIEmbedder:
    """Any OpenAI-compatible `/v1/embeddings` endpoint, through the official `openai` SDK."""

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 256,
    ) -> None:
        """Args:
        model: The endpoint's model name.
        base_url: e.g. `http://localhost:11434/v1` (Ollama); default `OPENAI_BASE_URL`, else OpenAI.
        api_key: Default `OPENAI_API_KEY`; local servers that need none get a placeholder.
        batch_size: Texts per request.
        """
        import openai

        self.name = f"openai:{model}"
        self.tokenizer: Tokenizer | None = None
        self._model = model
        self._batch = batch_size
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=2)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np
        import openai

        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            batch = list(texts[start : start + self._batch])
            try:
                answer = self._client.embeddings.create(
                    model=self._model, input=batch, encoding_format="float"
                )
            except openai.APIError as e:
                raise ModelError(f"the embeddings endpoint failed ({self.name}): {e}") from e
            if len(answer.data) != len(batch):
                raise ModelError(
                    f"the embeddings endpoint returned {len(answer.data)} vectors for {len(batch)} texts"
                )
            rows.extend(item.embedding for item in sorted(answer.data, key=lambda d: d.index))
        return _normalised(np.array(rows, dtype=np.float32))


def embedder_from_spec(spec: str, *, base_url: str | None = None) -> Embedder:
    """`onnx:REPO_OR_FOLDER[#file]` or `openai:MODEL` (with `base_url`) -> an embedder."""
    kind, _, name = spec.partition(":")
    if kind == "onnx" and name:
        model, _, file = name.partition("#")
        return OnnxEmbedder(model, file=file or "onnx/model.onnx")
    if kind == "openai" and name:
        return OpenAIEmbedder(name, base_url=base_url)
    raise UserError(
        f"unknown embedder {spec!r}: use onnx:REPO_OR_FOLDER (e.g. onnx:sentence-transformers/all-MiniLM-L6-v2) "
        "or openai:MODEL (e.g. openai:text-embedding-3-small, with --base-url for Ollama or vLLM)"
    )


def _model_folder(model: str, file: str, cache_dir: str | Path | None) -> Path:
    local = Path(model).expanduser()
    if local.is_dir():
        folder = local
    else:
        import huggingface_hub
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

        hub: Any = huggingface_hub  # partly untyped
        try:
            folder = Path(
                hub.snapshot_download(
                    model,
                    allow_patterns=[file, "tokenizer.json"],
                    cache_dir=str(cache_dir) if cache_dir else None,
                )
            )
        except (HfHubHTTPError, LocalEntryNotFoundError, OSError, ValueError) as e:
            raise UserError(
                f"cannot get the model {model!r} (not a local folder, and the download failed: {e}); pass a "
                f"folder holding {file} and tokenizer.json, or check the name and your network"
            ) from e
    missing = [name for name in (file, "tokenizer.json") if not (folder / name).is_file()]
    if missing:
        raise UserError(
            f"the model at {folder} lacks {' and '.join(missing)}; pass file= naming its ONNX file"
        )
    return folder


def _normalised(rows: Any) -> NDArray[np.float32]:
    import numpy as np

    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.maximum(norms, 1e-12)
