"""The structural check of a picture's bytes (decision 1059): whole pictures pass, from bytes or a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_vector_search_mcp.assets.formats import ImageFormat
from local_vector_search_mcp.assets.integrity import damage

from .conftest import image_bytes


@pytest.mark.parametrize("fmt", list(ImageFormat))
def test_a_whole_picture_has_no_damage_as_bytes_or_as_a_file(fmt: ImageFormat, tmp_path: Path) -> None:
    data = image_bytes(fmt.name, (5, 4), frames=3 if fmt is ImageFormat.GIF else 1)
    (tmp_path / "p").write_bytes(data)
    assert damage(data, fmt) is None and damage(tmp_path / "p", fmt) is None


def test_damage_is_said_in_pillow_s_words() -> None:
    png = image_bytes("PNG")
    cut_before_iend, cut_in_a_crc, garbage = png[:-12], png[:-16], png[:8] + b"\xde\xad\xbe\xef" * 8
    # the words are Pillow's ("truncated PNG file", "broken PNG file (...)"): only their gist is held
    assert all("PNG" in str(damage(data, ImageFormat.PNG)) for data in (cut_before_iend, cut_in_a_crc, garbage))
