"""A viewable PNG of a GIF's first frame (clients show PNG/JPEG/WebP, not animations).

Only the first frame is decoded, so a 500-frame GIF costs one frame. The logical screen
size from the header is checked before pillow touches the data: zero or more than
16 777 216 pixels (4096 x 4096) is refused, and the decoded frame must have that size.
Pillow's own decompression-bomb protection (``Image.MAX_IMAGE_PIXELS``) stays on.
"""

from __future__ import annotations

import io

from ..errors import UnsupportedFormat

__all__ = ["MAX_GIF_PIXELS", "gif_preview_png"]

MAX_GIF_PIXELS = 16_777_216


def gif_preview_png(data: bytes) -> bytes:
    if len(data) < 13:
        raise UnsupportedFormat("The GIF is truncated (no logical screen descriptor).")
    width = int.from_bytes(data[6:8], "little")
    height = int.from_bytes(data[8:10], "little")
    if width == 0 or height == 0:
        raise UnsupportedFormat("The GIF declares a zero width or height.")
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
