"""What pillow reads of an image: a viewable PNG of a GIF's first frame (clients show
PNG/JPEG/WebP, not animations), and whether a PNG/JPEG/WebP/GIF can be read through at all.

Only the first frame is decoded, so a 500-frame GIF costs one frame. The logical screen
size from the header is checked before pillow touches the data: zero or more than
16 777 216 pixels (4096 x 4096) is refused, and the decoded frame must have that size.
Pillow's own decompression-bomb protection (``Image.MAX_IMAGE_PIXELS``) stays on.

:func:`check_readable` is the cheapest read that still finds a truncated or damaged file
(decision 1125): a PNG's chunks and their CRCs up to ``IEND`` (``verify``, no pixels are
inflated), a JPEG decoded at an eighth of its size (``draft``), a WebP decoded whole up to
:data:`MAX_DECODED_PIXELS`, a GIF's first frame up to :data:`MAX_GIF_PIXELS`.
"""

from __future__ import annotations

import io
import math
import struct
import zlib
from typing import BinaryIO

from ..errors import UnsupportedFormat
from .formats import ImageFormat

__all__ = ["MAX_DECODED_PIXELS", "MAX_GIF_PIXELS", "MAX_SHOWN_SIDE", "check_readable", "gif_preview_png"]

MAX_GIF_PIXELS = 16_777_216

MAX_SHOWN_SIDE = 8000
"""The longest side kb_load_image shows: the Claude API refuses an image over 8000 pixels a side, and a
refused image in a tool result breaks every later turn of the conversation (decision 1125)."""

MAX_DECODED_PIXELS = MAX_SHOWN_SIDE * MAX_SHOWN_SIDE
"""A WebP larger than this is not decoded to check it (its header still is)."""

_DECODE_ERRORS = (OSError, ValueError, SyntaxError, EOFError, IndexError, struct.error, zlib.error)


def check_readable(
    source: bytes | BinaryIO, fmt: ImageFormat, what: str, hint: str, max_side: int | None = None
) -> None:
    """UnsupportedFormat unless pillow reads ``source`` (whose signature is ``fmt``'s) through.

    ``what`` names the image in the message (``'img/x.png'``, ``The image``), ``hint`` ends it
    (what the caller can do). ``max_side`` refuses an image with a longer side, from the
    header alone, before anything is decoded.
    """
    from PIL import Image  # imported on first use: pillow costs start-up time

    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    try:
        # No warnings.catch_warnings() around pillow's DecompressionBombWarning (over 89 M pixels): it swaps
        # the process-wide filters, and calls run on worker threads at once. The warning goes to stderr.
        with Image.open(stream, formats=[fmt.name]) as image:
            width, height = image.size
            if width == 0 or height == 0:
                raise UnsupportedFormat(f"{what} declares a zero width or height ({width}x{height}). {hint}")
            if max_side is not None and max(width, height) > max_side:
                raise UnsupportedFormat(
                    f"{what} is {width}x{height} pixels; clients refuse to show an image over {max_side} "
                    f"pixels a side. {hint}"
                )
            if fmt is ImageFormat.PNG:
                image.verify()
            elif fmt is ImageFormat.JPEG:
                image.draft(None, (math.ceil(width / 8), math.ceil(height / 8)))
                image.load()
            elif fmt is ImageFormat.WEBP:
                if width * height <= MAX_DECODED_PIXELS:
                    image.load()
            elif width * height <= MAX_GIF_PIXELS:
                image.seek(0)
                image.load()
    except Image.DecompressionBombError:
        raise UnsupportedFormat(
            f"{what} has more than {2 * (Image.MAX_IMAGE_PIXELS or 0)} pixels, more than any tool here reads "
            f"(a decompression bomb). {hint}"
        ) from None
    except _DECODE_ERRORS as exc:
        raise UnsupportedFormat(
            f"{what} cannot be read as a {fmt.name}: it is truncated or damaged ({type(exc).__name__}). {hint}"
        ) from None


def gif_preview_png(data: bytes) -> bytes:
    if len(data) < 13:
        raise UnsupportedFormat("The GIF is truncated (no logical screen descriptor).")
    width = int.from_bytes(data[6:8], "little")
    height = int.from_bytes(data[8:10], "little")
    if width == 0 or height == 0:
        raise UnsupportedFormat("The GIF declares a zero width or height.")
    if max(width, height) > MAX_SHOWN_SIDE:
        raise UnsupportedFormat(
            f"The GIF is {width}x{height} pixels; clients refuse to show an image over {MAX_SHOWN_SIDE} pixels a side."
        )
    if width * height > MAX_GIF_PIXELS:
        raise UnsupportedFormat(
            f"The GIF is {width}x{height} pixels, more than the {MAX_GIF_PIXELS} pixels a preview may have."
        )
    from PIL import Image  # imported on first use: pillow costs start-up time

    try:
        with Image.open(io.BytesIO(data), formats=["GIF"]) as image:
            image.seek(0)
            frame = image.convert("RGBA")
    except (OSError, ValueError, SyntaxError, EOFError, Image.DecompressionBombError) as exc:
        raise UnsupportedFormat(f"The GIF cannot be decoded ({type(exc).__name__}).") from None
    if frame.size != (width, height):
        raise UnsupportedFormat(
            f"The GIF's header says {width}x{height} but its first frame decodes to {frame.size[0]}x{frame.size[1]}."
        )
    out = io.BytesIO()
    frame.save(out, format="PNG")
    return out.getvalue()
