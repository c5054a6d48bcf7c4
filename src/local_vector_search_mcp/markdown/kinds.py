"""Element kinds and their wire values (contract §2.4)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ElementKind"]


class ElementKind(StrEnum):
    FRONT_MATTER = "front_matter"
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    CODE_BLOCK = "code_block"
    LIST_ITEM = "list_item"
    TABLE = "table"
    BLOCK_QUOTE = "block_quote"
