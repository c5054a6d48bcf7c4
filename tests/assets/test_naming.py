from __future__ import annotations

import pytest

from local_vector_search_mcp.assets.formats import ImageFormat, detect, format_for_path
from local_vector_search_mcp.assets.naming import (
    MAX_NAME_BYTES,
    check_file_name,
    generated_stem,
    markdown_link,
    name_candidates,
    name_too_long,
    skip_case_variants,
    upload_stem,
)
from local_vector_search_mcp.errors import InvalidArgument


@pytest.mark.parametrize(
    "name",
    ["", " ", ".", "..", "a/b", "a\\b", "a:b", "x?", "end.", "end ", "CON", "con.png", "lpt9", "tab\tname",
     "del\x7f", "nel\x85name", "c1\x9f"],
)  # fmt: skip
def test_unportable_file_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidArgument):
        check_file_name(name)


@pytest.mark.parametrize(
    ("name", "stem", "fmt"),
    [("cover", "cover", None), ("cover.png", "cover", ImageFormat.PNG), ("cover.PNG", "cover", ImageFormat.PNG),
     ("a.jpeg", "a", ImageFormat.JPEG), ("été 2024", "été 2024", None), ("console", "console", None)],
)  # fmt: skip
def test_portable_names_split_into_stem_and_claimed_format(name: str, stem: str, fmt: ImageFormat | None) -> None:
    assert check_file_name(name) == (stem, fmt)


def test_a_non_image_extension_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="extension"):
        check_file_name("notes.txt")


def test_upload_names_fall_back_to_generated() -> None:
    assert upload_stem("Screenshot 1.png") == "Screenshot 1"
    assert upload_stem("C:\\Users\\me\\photo.jpg") == "photo"
    assert upload_stem("../../etc/passwd") == "passwd"
    assert upload_stem("CON.png") is None
    assert upload_stem("bad:name.png") is None
    assert upload_stem("nel\x85.png") is None  # the path guard would refuse the saved file (decision 890)
    assert upload_stem(None) is None and upload_stem("") is None
    assert generated_stem().startswith("image-") and len(generated_stem()) == len("image-20240101-000000-") + 12


def test_collision_suffixes_go_before_the_extension() -> None:
    names = name_candidates("cover", ".png")
    assert [next(names) for _ in range(3)] == ["cover.png", "cover-2.png", "cover-3.png"]


def test_every_candidate_fits_the_name_limit_cut_at_a_character_boundary() -> None:
    """Decision 440: a stem of 4-byte characters (an upload's own name may have 200) is cut whole."""
    names = name_candidates("\U0001f600" * 200, ".webp")
    first, second = next(names), next(names)
    assert len(first.encode()) <= MAX_NAME_BYTES and first == "\U0001f600" * 62 + ".webp"
    assert len(second.encode()) <= MAX_NAME_BYTES and second == "\U0001f600" * 62 + "-2.webp"
    # a cut ending in a space or dot would not be portable
    assert next(name_candidates("a" * 250 + " bb", ".png")) == "a" * 250 + ".png"


@pytest.mark.parametrize("name", [".png", ".JPG", " .gif", ".hidden"])
def test_a_name_that_is_only_an_extension_is_refused(name: str) -> None:
    """Decision 441: the extension starts at the last dot, as .NET's ``Path`` reads a name."""
    with pytest.raises(InvalidArgument):
        check_file_name(name)


def test_an_upload_named_only_by_an_extension_gets_a_generated_name() -> None:
    assert upload_stem(".png") is None and upload_stem("dir/.gif") is None
    assert upload_stem("..png") is None  # the stem "." is no name
    assert upload_stem(".config.png") == ".config"


def test_a_file_name_too_long_with_its_extension_is_named() -> None:
    assert name_too_long("a" * 251, ".png") is None
    error = name_too_long("\u0444" * 126, ".png")
    assert error is not None and "256 bytes" in str(error)


@pytest.mark.parametrize(
    ("alt", "path", "link"),
    [
        ("A cat", "images/cat.png", "![A cat](images/cat.png)"),
        ("two\r\nlines\n", "images/a b.png", "![two lines ](<images/a b.png>)"),
        ("[x] \\ y", "images/f(1).png", "![\\[x\\] \\\\ y](<images/f(1).png>)"),
        ("", "p.gif", "![](p.gif)"),
        # `%` and `#` would read as an escape and a fragment: encoded, as kb_move writes them (decision 760)
        ("", "images/a%20b.png", "![](images/a%2520b.png)"),
        ("", "images/C#.png", "![](images/C%23.png)"),
        ("", "images/50% off #2.png", "![](<images/50%25 off %232.png>)"),
    ],
)
def test_markdown_link(alt: str, path: str, link: str) -> None:
    assert markdown_link(alt, path) == link


def test_signatures_and_extensions() -> None:
    assert detect(b"\x89PNG\r\n\x1a\n0000") is ImageFormat.PNG
    assert detect(b"\xff\xd8\xff\xe0") is ImageFormat.JPEG
    assert detect(b"RIFF\0\0\0\0WEBP") is ImageFormat.WEBP
    assert detect(b"RIFF\0\0\0\0WAVE") is None
    assert detect(b"GIF87a") is ImageFormat.GIF and detect(b"GIF89a..") is ImageFormat.GIF
    assert detect(b"<svg") is None and detect(b"") is None
    assert format_for_path("a/b.JPEG") is ImageFormat.JPEG and format_for_path("a/.png") is None
    assert ImageFormat.from_mime("image/jpg") is ImageFormat.JPEG
    assert ImageFormat.from_mime("application/octet-stream") is None


def test_chosen_names_skip_case_and_normalisation_variants_of_taken_ones() -> None:
    """Decision 442: the name must stay distinct on Windows and macOS checkouts."""
    taken = ["Cover.png", "cover-2.PNG", "caf\u00e9.png", "notes.md"]
    assert next(skip_case_variants(name_candidates("cover", ".png"), taken)) == "cover-3.png"
    assert next(skip_case_variants(name_candidates("cafe\u0301", ".png"), taken)) == "cafe\u0301-2.png"
    assert next(skip_case_variants(name_candidates("notes", ".png"), taken)) == "notes.png"
