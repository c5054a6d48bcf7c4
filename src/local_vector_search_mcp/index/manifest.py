"""The index manifest and the compatibility check (contract §8.2).

``index_manifest`` holds one value per key; the index is compatible with the
running configuration when every expected key is present with an equal value.
Beyond the upstream keys we record ``lexical_tokenizer`` (the CJK bigram
rewrite changes what the FTS index holds), ``storage_layout`` (bumped when the
stored tables change shape) and, in vector-enabled mode, ``vector_storage``
(float32 / int8 / binary tables differ) and, for the local model,
``embedding_max_input_tokens`` (the passage cap changes every vector).
"""

from __future__ import annotations

from typing import Any

from .chunker import CHUNKER_VERSION, EMBEDDING_TEXT_BUILDER_VERSION

__all__ = [
    "LEXICAL_TOKENIZER",
    "SCHEMA_VERSION",
    "STORAGE_LAYOUT",
    "compatibility_problems",
    "enum_value",
    "expected_manifest",
    "incompatible_message",
]

SCHEMA_VERSION = "5"
LEXICAL_TOKENIZER = "unicode61+cjk-bigram-1"
STORAGE_LAYOUT = "2"


def enum_value(value: Any) -> str:
    """Plain lower-case string of a config enum (pydantic enum or str)."""
    return str(getattr(value, "value", value)).lower()


def _flag(value: Any) -> str:
    return "true" if value else "false"


def expected_manifest(
    config: Any, model: str | None, dimensions: int | None, max_input_tokens: int | None = None
) -> dict[str, str]:
    chunking = config.chunking
    values = {
        "schema_version": SCHEMA_VERSION,
        "chunker_version": CHUNKER_VERSION,
        "embedding_text_builder_version": EMBEDDING_TEXT_BUILDER_VERSION,
        "embedding_model": model or "none",
        "chunking_max_chunk_bytes": str(chunking.max_chunk_bytes),
        "chunking_max_elements": str(chunking.max_elements),
        "chunking_include_heading_context": _flag(chunking.include_heading_context),
        "chunking_include_front_matter": _flag(chunking.include_front_matter),
        "index_mode": "vector-enabled" if model else "lexical",
        "lexical_tokenizer": LEXICAL_TOKENIZER,
        "storage_layout": STORAGE_LAYOUT,
    }
    if model:
        if dimensions is not None:
            values["embedding_dimensions"] = str(dimensions)
        values["vector_storage"] = enum_value(config.embedding.vector_storage)
        if max_input_tokens is not None:
            values["embedding_max_input_tokens"] = str(max_input_tokens)
    return values


def compatibility_problems(stored: dict[str, str], expected: dict[str, str]) -> list[str]:
    """``<key>: indexed '<old>', current '<new>'`` (or ``indexed <missing>``) per difference."""
    problems = []
    for key, value in expected.items():
        if key not in stored:
            problems.append(f"{key}: indexed <missing>, current '{value}'")
        elif stored[key] != value:
            problems.append(f"{key}: indexed '{stored[key]}', current '{value}'")
    for key in sorted(set(stored) - set(expected)):
        if key in ("embedding_dimensions", "vector_storage", "embedding_max_input_tokens"):
            problems.append(f"{key}: indexed '{stored[key]}', current <none>")
    return problems


def incompatible_message(problems: list[str]) -> str:
    return (
        "The index was built with different settings and cannot be used as it is ("
        + "; ".join(problems)
        + "). Rebuild it with kb_reindex force=true (CLI: --reindex --force); "
        "nothing is deleted without force."
    )
