"""Whether a picture's bytes hold together past its signature (decision 1059).

A signature says what a file claims to be, and a PNG header followed by garbage has one: such a
file was saved, and kb_load_image, which sends bytes undecoded (decision 118), later handed the
model a picture it could not read. Pillow's format plugins read a file's structure without
decoding a pixel: a PNG's every chunk and its CRC up to ``IEND``, a JPEG's markers up to its scan,
a WebP's RIFF chunks, a GIF's header and first image descriptor. The plugin classes are used
directly rather than ``Image.open``, so the decompression-bomb check, which weighs a picture's
pixel count, plays no part: nothing is decoded, and a picture's size was never a reason to refuse it.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ..lazy_imports import IMPORT_LOCK
from .formats import ImageFormat

__all__ = ["damage"]


def damage(source: bytes | Path, fmt: ImageFormat) -> str | None:
    """Why ``source`` (bytes, or a file) is not a well-formed ``fmt`` picture; None when it is."""
    plugin = _plugin(fmt)
    try:
        with source.open("rb") if isinstance(source, Path) else io.BytesIO(source) as fp:
            image = plugin(fp)
            image.verify()
    except Exception as exc:  # a plugin reading garbage fails in many ways; each means damage
        return str(exc) or type(exc).__name__
    return None


def _plugin(fmt: ImageFormat) -> Any:
    with IMPORT_LOCK:  # imported on first use (pillow costs start-up time), one thread at a time
        from PIL import GifImagePlugin, JpegImagePlugin, PngImagePlugin, WebPImagePlugin

    return {
        ImageFormat.PNG: PngImagePlugin.PngImageFile,
        ImageFormat.JPEG: JpegImagePlugin.JpegImageFile,
        ImageFormat.WEBP: WebPImagePlugin.WebPImageFile,
        ImageFormat.GIF: GifImagePlugin.GifImageFile,
    }[fmt]
