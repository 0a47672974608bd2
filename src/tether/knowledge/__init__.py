"""Knowledge: ingest documents and Q&A, search them by words and by meaning, rerank (seeds 004, 001, 000).

    kb = KnowledgeBase("knowledge.db", embedder=OnnxEmbedder())     # or no embedder: BM25 only
    kb.ingest(["docs/", "faq.csv"], index="kb", namespace="docs")   # .txt .md .csv .pdf .html
    kb.search("What is Ollama?", index="kb", namespace="docs")      # hybrid: BM25 + vectors, fused
    knowledge_tools(kb, index="kb", namespace="docs")               # vectorSearch, search.vector, search, ...

Needs the `knowledge` extra for embeddings, PDF and HTML: pip install 'tether[knowledge]'. Never imported
by `import tether`; importing this package loads no optional dependency until it is used.
"""

from tether.knowledge._base import VECTOR_WEIGHT as VECTOR_WEIGHT
from tether.knowledge._base import Fusion as Fusion
from tether.knowledge._base import KnowledgeBase as KnowledgeBase
from tether.knowledge._base import SearchMode as SearchMode
from tether.knowledge._base import fuse as fuse
from tether.knowledge._base import fuse_rrf as fuse_rrf
from tether.knowledge._base import open_store as open_store
from tether.knowledge._embeddings import Embedder as Embedder
from tether.knowledge._embeddings import OnnxEmbedder as OnnxEmbedder
from tether.knowledge._embeddings import OnnxReranker as OnnxReranker
from tether.knowledge._embeddings import OpenAIEmbedder as OpenAIEmbedder
from tether.knowledge._embeddings import Reranker as Reranker
from tether.knowledge._embeddings import WordLlamaEmbedder as WordLlamaEmbedder
from tether.knowledge._embeddings import embedder_from_spec as embedder_from_spec
from tether.knowledge._ingest import Chunking as Chunking
from tether.knowledge._ingest import IngestReport as IngestReport
from tether.knowledge._ingest import chunk_text as chunk_text
from tether.knowledge._pack import KNOWLEDGE_PACK as KNOWLEDGE_PACK
from tether.knowledge._pack import knowledge_tools as knowledge_tools
from tether.knowledge._postgres import PostgresStore as PostgresStore
from tether.knowledge._sqlite import SqliteStore as SqliteStore
from tether.knowledge._store import Filter as Filter
from tether.knowledge._store import Hit as Hit
from tether.knowledge._store import NewChunk as NewChunk
from tether.knowledge._store import Store as Store
from tether.knowledge._tokens import BpeTokenizer as BpeTokenizer
from tether.knowledge._tokens import HfTokenizer as HfTokenizer
from tether.knowledge._tokens import Tokenizer as Tokenizer

__all__ = [
    "KNOWLEDGE_PACK",
    "VECTOR_WEIGHT",
    "BpeTokenizer",
    "Chunking",
    "Embedder",
    "Filter",
    "Fusion",
    "HfTokenizer",
    "Hit",
    "IngestReport",
    "KnowledgeBase",
    "NewChunk",
    "OnnxEmbedder",
    "OnnxReranker",
    "OpenAIEmbedder",
    "PostgresStore",
    "Reranker",
    "SearchMode",
    "SqliteStore",
    "Store",
    "Tokenizer",
    "WordLlamaEmbedder",
    "chunk_text",
    "embedder_from_spec",
    "fuse",
    "fuse_rrf",
    "knowledge_tools",
    "open_store",
]
