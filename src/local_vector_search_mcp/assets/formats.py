"""The supported image formats, told apart by their first bytes (never by the name alone).

A file's extension says what it claims to be; its signature says what it is. Tools compare
the two and refuse a mismatch with UNSUPPORTED_FORMAT (spec/decisions.md 14, 37).
"""

from __future__ import annotations

from enum import Enum

__all__ = ["MAX_BYTES", "SIGNATURE_BYTES", "ImageFormat", "detect", "format_for_path"]

MAX_BYTES = 26_214_400
"""25 MiB: the hard cap on every image and downloaded file (contract §11.1, §12.2)."""

SIGNATURE_BYTES = 12
"""Enough leading bytes to recognise every supported format (WebP needs 12)."""


class ImageFormat(Enum):
    PNG = ("image/png", ".png", (".png",))
    JPEG = ("image/jpeg", ".jpg", (".jpg", ".jpeg"))
    WEBP = ("image/webp", ".webp", (".webp",))
    GIF = ("image/gif", ".gif", (".gif",))

    def __init__(self, mime: str, canonical: str, extensions: tuple[str, ...]) -> None:
        self.mime = mime
        self.canonical = canonical
        """Extension given to generated names."""
        self.extensions = extensions
        """Every extension (lowercase, with the dot) this format may carry; `.jpg`/`.jpeg` are one family."""

    @classmethod
    def from_mime(cls, mime: str | None) -> ImageFormat | None:
        """The format a declared MIME type names, or None when it names none of ours."""
        if not mime:
            return None
        base = mime.split(";", 1)[0].strip().lower()
        if base == "image/jpg":  # common misspelling; it still names JPEG
            base = "image/jpeg"
        return next((f for f in cls if f.mime == base), None)

    @classmethod
    def from_extension(cls, extension: str) -> ImageFormat | None:
        """``.PNG`` -> PNG; None for anything that is not an image extension."""
        ext = extension.lower()
        return next((f for f in cls if ext in f.extensions), None)


def detect(head: bytes) -> ImageFormat | None:
    """The format whose signature ``head`` starts with (needs :data:`SIGNATURE_BYTES` bytes)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return ImageFormat.PNG
    if head.startswith(b"\xff\xd8\xff"):
        return ImageFormat.JPEG
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return ImageFormat.WEBP
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return ImageFormat.GIF
    return None


def format_for_path(rel: str) -> ImageFormat | None:
    """The format a root-relative path's extension claims (``a/b.JPEG`` -> JPEG)."""
    name = rel.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return ImageFormat.from_extension(name[dot:]) if dot > 0 else None
