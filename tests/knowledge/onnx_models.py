"""Models the tests make themselves (no weights can be downloaded here), in the layout a download has.

A "static embedding" model (token -> vector, then mean pooling, as model2vec-style models do) and a
cross-encoder-shaped scorer, each an ONNX graph beside a `tokenizers` WordLevel `tokenizer.json`, placed
in a Hugging Face cache exactly as `snapshot_download` leaves a downloaded repository.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from numpy.typing import NDArray
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

WORD = re.compile(r"\w+")


def build_tokenizer(vocabulary: Sequence[str], path: Path) -> dict[str, int]:
    vocab = {"[PAD]": 0, "[UNK]": 1, **{word: i + 2 for i, word in enumerate(vocabulary)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(path))
    return vocab


def build_static_embedder(folder: Path, vocabulary: Sequence[str], table: NDArray[np.float32]) -> Path:
    """`folder/tokenizer.json` + `folder/onnx/model.onnx`: input_ids -> table[input_ids] (batch, seq, dim)."""
    (folder / "onnx").mkdir(parents=True, exist_ok=True)
    build_tokenizer(vocabulary, folder / "tokenizer.json")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        "static_embedding",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", table.shape[1]]
            )
        ],
        [numpy_helper.from_array(table.astype(np.float32), "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    check_and_save(model, str(folder / "onnx" / "model.onnx"))
    return folder


def build_scorer(folder: Path, vocabulary: Sequence[str], weights: NDArray[np.float32]) -> Path:
    """A cross-encoder-shaped model: logits (batch, 1) = sum over tokens of weights[token] * mask."""
    (folder / "onnx").mkdir(parents=True, exist_ok=True)
    build_tokenizer(vocabulary, folder / "tokenizer.json")
    nodes = [
        helper.make_node("Gather", ["weights", "input_ids"], ["per_token"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["per_token", "mask"], ["kept"]),
        helper.make_node("ReduceSum", ["kept", "axes"], ["logits"], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes,
        "scorer",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        [
            numpy_helper.from_array(weights.astype(np.float32), "weights"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    check_and_save(model, str(folder / "onnx" / "model.onnx"))
    return folder


def as_downloaded(cache: Path, repo: str, built: Path) -> None:
    """Place a built model in a Hugging Face cache as `snapshot_download` leaves a downloaded repository."""
    revision = "0123456789abcdef0123456789abcdef01234567"
    root = cache / f"models--{repo.replace('/', '--')}"
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text(revision)
    snapshot = root / "snapshots" / revision
    for file in built.rglob("*"):
        if file.is_file():
            target = snapshot / file.relative_to(built)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.read_bytes())


def check_and_save(model: onnx.ModelProto, path: str) -> None:
    library: Any = onnx  # partly untyped
    library.checker.check_model(model)
    library.save(model, path)
