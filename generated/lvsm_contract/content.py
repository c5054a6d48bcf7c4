# generated from spec/ by tools/generate.py, do not edit
"""What a content-only tool returns (a tool whose spec has ``output: null`` and ``content:``).

Such a tool has no structured result: its handler returns a :class:`ContentResult`, a list of
blocks that the MCP server turns into MCP content (text, image, embedded binary resource) and
the ``call`` CLI prints (text as it is, binary blocks as a one-line JSON summary).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True)
class ImageBlock:
    data: bytes
    mime_type: str


@dataclass(frozen=True, slots=True)
class BlobResource:
    """A binary file embedded as an MCP resource (``uri`` names it, e.g. ``file:///docs/a.pdf``)."""

    uri: str
    mime_type: str
    data: bytes


ContentBlock = TextBlock | ImageBlock | BlobResource


@dataclass(frozen=True, slots=True)
class ContentResult:
    blocks: tuple[ContentBlock, ...]
