"""check_readable and the GIF preview on real image bytes: what a client could not show is refused
before it reaches one (decision 1125)."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image

from local_vector_search_mcp.assets.formats import ImageFormat
from local_vector_search_mcp.assets.preview import MAX_SHOWN_SIDE, check_readable, gif_preview_png
from local_vector_search_mcp.errors import UnsupportedFormat


def encode(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def noise(fmt: str, size: tuple[int, int] = (64, 48)) -> bytes:
    """Incompressible pixels, so a cut anywhere lands in image data."""
    return encode(Image.effect_noise(size, 60).convert("RGB"), fmt)


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose IHDR declares ``width`` x ``height`` over a few bytes of data (a bomb's shape)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


def cmyk_jpeg() -> bytes:
    return encode(Image.new("CMYK", (20, 10), (0, 50, 100, 0)), "JPEG")


def rotated_jpeg() -> bytes:
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90° clockwise to view"
    return encode(Image.new("RGB", (40, 10), "green"), "JPEG", exif=exif)


def animated_gif() -> bytes:
    frames = [Image.new("P", (16, 16), i) for i in range(3)]
    return encode(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)


READABLE = [
    ("PNG", noise("PNG")),
    ("PNG", encode(Image.new("I;16", (8, 8)), "PNG")),  # 16 bits a channel
    ("PNG", encode(Image.new("1", (MAX_SHOWN_SIDE, 1)), "PNG")),  # the longest side shown
    ("JPEG", noise("JPEG")),
    ("JPEG", cmyk_jpeg()),
    ("JPEG", rotated_jpeg()),
    ("WEBP", noise("WEBP")),
    ("GIF", animated_gif()),
]


@pytest.mark.parametrize(("fmt", "data"), READABLE)
def test_whole_images_of_every_kind_are_readable(fmt: str, data: bytes) -> None:
    check_readable(data, ImageFormat[fmt], "'x'", "hint", MAX_SHOWN_SIDE)
    check_readable(io.BytesIO(data), ImageFormat[fmt], "'x'", "hint")  # a file object reads the same


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
@pytest.mark.parametrize("keep", [0.5, 0.9, 40])
def test_a_cut_image_is_refused_naming_it_and_the_hint(fmt: str, keep: float) -> None:
    data = noise(fmt)
    cut = data[: int(len(data) * keep) if keep < 1 else int(keep)]
    with pytest.raises(
        UnsupportedFormat, match=rf"^.a/x. cannot be read as a {fmt}: it is truncated or damaged .*Do this\.$"
    ):
        check_readable(cut, ImageFormat[fmt], "'a/x'", "Do this.")


def test_a_png_whose_bytes_were_changed_is_refused() -> None:
    data = bytearray(noise("PNG"))
    data[len(data) // 2] ^= 0xFF  # the chunk's CRC no longer matches
    with pytest.raises(UnsupportedFormat, match="truncated or damaged"):
        check_readable(bytes(data), ImageFormat.PNG, "'x'", "")


def test_sides_over_the_limit_are_refused_from_the_header_only_when_asked() -> None:
    wide = encode(Image.new("1", (MAX_SHOWN_SIDE + 1, 1)), "PNG")
    with pytest.raises(UnsupportedFormat, match=r"is 8001x1 pixels; clients refuse to show an image over 8000"):
        check_readable(wide, ImageFormat.PNG, "'x'", "", MAX_SHOWN_SIDE)
    check_readable(wide, ImageFormat.PNG, "'x'", "")  # a save keeps it


def test_a_decompression_bomb_is_refused_before_decoding() -> None:
    with pytest.raises(UnsupportedFormat, match="decompression bomb"):
        check_readable(png_header_only(100_000, 100_000), ImageFormat.PNG, "'x'", "")
    with pytest.raises(UnsupportedFormat, match=r"zero width or height|truncated or damaged"):
        check_readable(png_header_only(0, 5), ImageFormat.PNG, "'x'", "")


def test_a_gif_preview_refuses_a_side_no_client_shows() -> None:
    wide = b"GIF89a" + (MAX_SHOWN_SIDE + 1).to_bytes(2, "little") + (1).to_bytes(2, "little") + b"\0" * 20
    with pytest.raises(UnsupportedFormat, match="over 8000 pixels a side"):
        gif_preview_png(wide)
