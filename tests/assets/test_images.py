"""The image operations on a real folder: results, refusals, and nothing left behind."""

from __future__ import annotations

import base64
import hashlib
import io
import os
from pathlib import Path

import pytest
from https_fixture import Reply, TlsServer
from link_swap import LinkSwap
from PIL import Image

from local_vector_search_mcp.assets.download import DownloadPolicy
from local_vector_search_mcp.assets.formats import ImageFormat
from local_vector_search_mcp.assets.images import (
    InlineImage,
    RemoteImage,
    decode_cursor,
    decode_image_data,
    delete_image,
    encode_cursor,
    list_images,
    load_image,
    move_image,
    save_image,
)
from local_vector_search_mcp.errors import (
    AlreadyExists,
    Conflict,
    InvalidArgument,
    InvalidPath,
    KbError,
    NotFound,
    PermissionDenied,
    UnsupportedFormat,
)
from local_vector_search_mcp.workspace import Workspace

from .conftest import image_bytes, make_ws, tree

PNG = image_bytes("PNG")
JPEG = image_bytes("JPEG")
GIF = image_bytes("GIF", (5, 4), frames=3)
WEBP = image_bytes("WEBP")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------ save (inline data)


def test_inline_save_lands_byte_identical_under_images(ws: Workspace) -> None:
    saved = save_image(ws, InlineImage(PNG), alt_text="A [chart]")
    assert saved.path.startswith("images/image-") and saved.path.endswith(".png")
    assert (ws.root / saved.path).read_bytes() == PNG
    assert saved.sha256 == sha(PNG) and saved.size == len(PNG) and saved.format is ImageFormat.PNG
    assert saved.markdown == f"![A \\[chart\\]]({saved.path})"
    assert tree(ws.root) == ["images", saved.path]  # no staging file left


def test_names_get_suffixes_and_keep_the_callers_extension_case(ws: Workspace) -> None:
    paths = [save_image(ws, InlineImage(JPEG), file_name="cover").path for _ in range(3)]
    assert paths == ["images/cover.jpg", "images/cover-2.jpg", "images/cover-3.jpg"]
    assert save_image(ws, InlineImage(PNG), file_name="cover.PNG").path == "images/cover.PNG"
    assert save_image(ws, InlineImage(JPEG), file_name="pic.jpeg").path == "images/pic.jpeg"


def test_target_path_is_exact_creates_folders_and_never_overwrites(ws: Workspace) -> None:
    saved = save_image(ws, InlineImage(WEBP), target_path="docs/img/diagram.webp", alt_text="d")
    assert saved.path == "docs/img/diagram.webp" and saved.markdown == "![d](docs/img/diagram.webp)"
    before = tree(ws.root)
    with pytest.raises(AlreadyExists, match="already exists"):
        save_image(ws, InlineImage(WEBP), target_path="docs/img/diagram.webp")
    with pytest.raises(UnsupportedFormat):
        save_image(ws, InlineImage(PNG), target_path="new/folder/x.gif")
    assert tree(ws.root) == before  # the refused save removed the folders it created


def test_data_uris_and_wrapped_base64_decode() -> None:
    text = base64.b64encode(GIF).decode()
    assert decode_image_data(text).data == GIF
    assert decode_image_data(f"data:image/gif;base64,{text}") == InlineImage(GIF, "image/gif")
    wrapped = "\n".join(text[i : i + 76] for i in range(0, len(text), 76))
    assert decode_image_data(wrapped.rstrip("=")).data == GIF
    for bad in ["not base64!", "data:image/png,plain", "data:;base64", "", "===="]:
        with pytest.raises(InvalidArgument):
            decode_image_data(bad)


@pytest.mark.parametrize(
    ("data", "kwargs", "error"),
    [
        (b"%PDF-1.7 not an image", {}, UnsupportedFormat),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", {}, UnsupportedFormat),
        (PNG, {"file_name": "x.jpg"}, InvalidArgument),
        (PNG, {"file_name": "x.txt"}, InvalidArgument),
        (PNG, {"file_name": "CON"}, InvalidArgument),
        (PNG, {"file_name": "a", "target_path": "a.png"}, InvalidArgument),
        (PNG, {"target_path": "../escape.png"}, InvalidPath),
        (PNG, {"target_path": ".git/x.png"}, InvalidPath),
        (PNG, {"target_path": "x.jpg"}, UnsupportedFormat),
    ],
)
def test_inline_refusals_leave_nothing(ws: Workspace, data: bytes, kwargs: dict[str, str], error: type) -> None:
    with pytest.raises(error):
        save_image(ws, InlineImage(data), **kwargs)  # type: ignore[arg-type]
    assert tree(ws.root) == []


def test_declared_type_naming_another_format_is_refused(ws: Workspace) -> None:
    with pytest.raises(InvalidArgument, match="declared as image/jpeg"):
        save_image(ws, InlineImage(PNG, "image/jpeg"))
    save_image(ws, InlineImage(PNG, "application/octet-stream"))  # unknown types are ignored


def test_writes_disabled_is_checked_first(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, writes=False)
    with pytest.raises(PermissionDenied, match="Workspace writes are disabled"):
        save_image(ws, InlineImage(b"not even an image"), target_path="../x.png")
    with pytest.raises(PermissionDenied):
        delete_image(ws, "missing.png")
    with pytest.raises(PermissionDenied):
        move_image(ws, "a.png", "b.png")
    assert tree(ws.root) == []


# ------------------------------------------------------------------ save (download)


def test_download_save_through_the_allowance(ws: Workspace, server: TlsServer) -> None:
    server.routes["/f"] = Reply(body=JPEG, headers={"Content-Type": "image/jpeg"})
    policy = DownloadPolicy.from_hosts(["127.0.0.1"])
    saved = save_image(ws, RemoteImage(server.url("/f?sig=1"), "image/jpeg", "Holiday photo.JPG"), policy=policy)
    assert saved.path == "images/Holiday photo.jpg"
    assert saved.markdown == "![](<images/Holiday photo.jpg>)"
    assert (ws.root / saved.path).read_bytes() == JPEG and saved.sha256 == sha(JPEG)
    assert tree(ws.root) == ["images", saved.path]


@pytest.mark.parametrize(
    ("reply", "kwargs", "error"),
    [
        (Reply(body=b"<html>not an image</html>"), {}, UnsupportedFormat),
        (Reply(body=PNG), {"declared": "image/gif"}, InvalidArgument),
        (Reply(body=PNG), {"target_path": "deep/er/x.webp"}, UnsupportedFormat),
        (Reply(body=PNG), {"file_name": "x.gif"}, InvalidArgument),
        (Reply(500), {}, InvalidArgument),
        (Reply(body=PNG + b"\0" * 5000), {"small": True}, InvalidArgument),
        (Reply(302, headers={"Location": "http://127.0.0.1/x.png"}), {}, InvalidArgument),
    ],
)
def test_download_refusals_leave_nothing(
    ws: Workspace, server: TlsServer, reply: Reply, kwargs: dict[str, object], error: type
) -> None:
    server.routes["/f"] = reply
    policy = DownloadPolicy.from_hosts(["127.0.0.1"], max_bytes=1000 if kwargs.pop("small", False) else 26_214_400)
    declared = kwargs.pop("declared", None)
    with pytest.raises(error):
        save_image(ws, RemoteImage(server.url("/f"), declared), policy=policy, **kwargs)  # type: ignore[arg-type]
    assert tree(ws.root) == []


def test_loopback_is_refused_without_the_allowance(ws: Workspace, server: TlsServer) -> None:
    server.routes["/f"] = Reply(body=PNG)
    with pytest.raises(InvalidArgument, match="loopback"):
        save_image(ws, RemoteImage(server.url("/f")))
    assert tree(ws.root) == [] and server.requests == []


# ------------------------------------------------------------------ list


def test_listing_pages_sorted_case_insensitively_skipping_links_and_internals(ws: Workspace) -> None:
    names = ["b.png", "A.gif", "a/z.jpeg", "c.WEBP", "docs/x.md", "notes.txt", ".git/hidden.png", "Z.jpg"]
    for name in names:
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_bytes(b"whatever")  # listing goes by extension only
    (ws.root / "link.png").symlink_to(ws.root / "b.png")
    (ws.root / "dirlink").symlink_to(ws.root / "a")
    (ws.root / "folder.png").mkdir()
    seen: list[str] = []
    cursor = None
    while True:
        page = list_images(ws, cursor, 2)
        seen += [entry.path for entry in page.images]
        cursor = page.next_cursor
        if cursor is None:
            break
        assert len(page.images) == 2
    assert seen == ["A.gif", "a/z.jpeg", "b.png", "c.WEBP", "Z.jpg"]
    second = list_images(ws).images[1]
    assert second.format is ImageFormat.JPEG and second.size == 8


def test_a_cursor_survives_deleting_its_item(ws: Workspace) -> None:
    for name in ["a.png", "b.png", "c.png", "d.png"]:
        (ws.root / name).write_bytes(PNG)
    page = list_images(ws, None, 2)
    (ws.root / "b.png").unlink()
    (ws.root / "a2.png").write_bytes(PNG)  # before the cursor: not repeated, not skipped after
    assert [e.path for e in list_images(ws, page.next_cursor, 5).images] == ["c.png", "d.png"]


def test_bad_cursors_and_page_sizes(ws: Workspace) -> None:
    assert decode_cursor(ws, encode_cursor("a/b.png")) == "a/b.png"
    bad = [
        "!!!",
        base64.urlsafe_b64encode(b"v1\na.png").decode().rstrip("="),
        base64.urlsafe_b64encode(b"v2\n../x.png").decode().rstrip("="),
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
    ]
    for cursor in bad:
        with pytest.raises(InvalidArgument, match="start again"):
            list_images(ws, cursor)
    for size in (0, 201):
        with pytest.raises(InvalidArgument):
            list_images(ws, None, size)


def test_an_unreadable_folder_is_an_error_not_a_short_page(ws: Workspace) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every folder")
    (ws.root / "locked").mkdir()
    (ws.root / "locked" / "x.png").write_bytes(PNG)
    (ws.root / "locked").chmod(0)
    try:
        with pytest.raises(PermissionDenied):
            list_images(ws)
    finally:
        (ws.root / "locked").chmod(0o755)


# ------------------------------------------------------------------ load


def test_load_returns_stored_bytes_or_a_gif_preview(ws: Workspace) -> None:
    for name, data in [("a.png", PNG), ("b.jpeg", JPEG), ("c.webp", WEBP), ("d.gif", GIF)]:
        (ws.root / name).write_bytes(data)
    jpeg = load_image(ws, "b.jpeg")
    assert jpeg.shown == JPEG and jpeg.shown_mime == "image/jpeg" and jpeg.sha256 == sha(JPEG)
    gif = load_image(ws, "d.gif")
    assert gif.format is ImageFormat.GIF and gif.size == len(GIF) and gif.sha256 == sha(GIF)
    assert gif.shown_mime == "image/png"
    with Image.open(io.BytesIO(gif.shown)) as preview:
        assert preview.format == "PNG" and preview.size == (5, 4)


def test_load_refusals(ws: Workspace) -> None:
    (ws.root / "fake.png").write_bytes(JPEG)
    (ws.root / "x.jpg").write_bytes(JPEG)
    (ws.root / "dir.png").mkdir()
    (ws.root / "big.png").write_bytes(PNG + b"\0" * 26_214_400)
    (ws.root / "link.png").symlink_to(ws.root / "x.jpg")
    (ws.root / "huge.gif").write_bytes(b"GIF89a" + (5000).to_bytes(2, "little") * 2 + b"\0" * 20)
    (ws.root / "broken.gif").write_bytes(b"GIF89a" + (4).to_bytes(2, "little") * 2 + b"\0garbage")
    (ws.root / "zero.gif").write_bytes(b"GIF89a\0\0\0\0" + b"\0" * 10)
    cases = {
        "fake.png": UnsupportedFormat,
        "missing.png": NotFound,
        "nofolder/missing.png": NotFound,
        "dir.png": InvalidArgument,
        "big.png": InvalidArgument,
        "link.png": InvalidPath,
        "../x.png": InvalidPath,
        "x.txt": InvalidPath,
        "huge.gif": UnsupportedFormat,
        "broken.gif": UnsupportedFormat,
        "zero.gif": UnsupportedFormat,
    }
    for path, error in cases.items():
        with pytest.raises(error):
            load_image(ws, path)
    assert load_image(ws, "x.jpg").format is ImageFormat.JPEG  # .jpg and .jpeg are one family


# ------------------------------------------------------------------ delete and move


def test_delete(ws: Workspace) -> None:
    (ws.root / "img").mkdir()
    (ws.root / "img" / "a.png").write_bytes(PNG)
    (ws.root / "d.png").mkdir()
    assert delete_image(ws, "img/a.png") == "img/a.png"
    assert tree(ws.root) == ["d.png", "img"]  # the folder stays
    for path, error in [("img/a.png", NotFound), ("d.png", InvalidArgument), (".git/a.png", InvalidPath)]:
        with pytest.raises(error):
            delete_image(ws, path)


def test_move_renames_with_the_hash_guard(ws: Workspace) -> None:
    (ws.root / "a.jpg").write_bytes(JPEG)
    (ws.root / "taken.png").write_bytes(PNG)
    with pytest.raises(Conflict):
        move_image(ws, "a.jpg", "new/b.jpeg", "0" * 64)
    with pytest.raises(AlreadyExists):
        move_image(ws, "a.jpg", "taken.png")
    with pytest.raises(UnsupportedFormat):
        move_image(ws, "a.jpg", "new/b.png")
    with pytest.raises(InvalidArgument):
        move_image(ws, "a.jpg", "a.jpg")
    with pytest.raises(NotFound):
        move_image(ws, "nope.jpg", "b.jpg")
    assert tree(ws.root) == ["a.jpg", "taken.png"]  # no folder left by the refusals
    ino = (ws.root / "a.jpg").stat().st_ino
    moved = move_image(ws, "a.jpg", "new/b.jpeg", sha(JPEG).upper())
    assert (moved.previous_path, moved.path, moved.sha256) == ("a.jpg", "new/b.jpeg", sha(JPEG))
    assert (ws.root / "new/b.jpeg").stat().st_ino == ino  # a rename, not a copy
    assert tree(ws.root) == ["new", "new/b.jpeg", "taken.png"]


def test_move_refuses_a_file_whose_bytes_lie(ws: Workspace) -> None:
    (ws.root / "lie.png").write_bytes(b"%PDF-1.7")
    with pytest.raises(UnsupportedFormat):
        move_image(ws, "lie.png", "x.png")
    with pytest.raises(KbError):
        move_image(ws, "lie.png", "x.png", "nothex")


def test_staging_files_have_the_name_writer_recovery_removes(ws: Workspace) -> None:
    from local_vector_search_mcp import writer
    from local_vector_search_mcp.assets.store import staging_path

    staged = staging_path(ws.root)
    assert writer._TEMP_NAME.match(staged.name)
    staged.write_bytes(PNG)
    with writer.write_lock(ws) as intent:
        intent.note(tmp=staged)  # as publish() does before linking; then the process dies
    assert writer.recover(ws) == [f"removed the temporary file {staged.name}"]
    assert not staged.exists()


def test_warm_pages_reuse_the_walk_until_a_folder_changes(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from local_vector_search_mcp.assets import images as engine

    (ws.root / "sub").mkdir()
    for name in ["a.png", "sub/b.png"]:
        (ws.root / name).write_bytes(PNG)
    hour_ago = os.stat(ws.root).st_mtime - 3600
    for folder in (ws.root, ws.root / "sub"):
        os.utime(folder, (hour_ago, hour_ago))
    walks: list[object] = []
    real_scandir = os.scandir

    def counting(path: object) -> object:
        walks.append(path)
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(engine.os, "scandir", counting)
    assert [e.path for e in list_images(ws).images] == ["a.png", "sub/b.png"]
    first = len(walks)
    # ctime still changes with the writes above, so let the racy window pass without sleeping
    monkeypatch.setattr(engine, "RACY_NS", 0)
    list_images(ws)
    settled = len(walks)
    assert [e.path for e in list_images(ws).images] == ["a.png", "sub/b.png"]
    assert len(walks) == settled, "an unchanged tree must not be walked again"
    assert first > 0
    (ws.root / "sub" / "c.png").write_bytes(PNG)  # changes sub's mtime
    assert [e.path for e in list_images(ws).images] == ["a.png", "sub/b.png", "sub/c.png"]
    (ws.root / "a.png").unlink()
    assert [e.path for e in list_images(ws).images] == ["sub/b.png", "sub/c.png"]
    (ws.root / "sub").chmod(0o700)  # ctime only: still re-walked
    before = len(walks)
    list_images(ws)
    assert len(walks) > before


def test_inline_data_over_25_mib_is_refused_before_anything_is_written(ws: Workspace) -> None:
    from local_vector_search_mcp.assets.formats import MAX_BYTES

    text = base64.b64encode(PNG + bytes(MAX_BYTES + 1 - len(PNG))).decode()
    with pytest.raises(InvalidArgument, match="25 MiB"):
        decode_image_data(text)
    exact = decode_image_data(base64.b64encode(PNG + bytes(MAX_BYTES - len(PNG))).decode())
    assert len(exact.data) == MAX_BYTES
    assert tree(ws.root) == []


def test_a_linked_images_folder_is_refused_and_nothing_lands_behind_it(ws: Workspace, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ws.root / "images").symlink_to(elsewhere)
    with pytest.raises(InvalidPath, match="symbolic links"):
        save_image(ws, InlineImage(PNG))
    with pytest.raises(InvalidPath):
        save_image(ws, InlineImage(PNG), target_path="images/x.png")
    assert list(elsewhere.iterdir()) == []


# ------------------------------------------------------------ a link swapped in mid-write (decision 674)


@pytest.fixture
def swap(ws: Workspace, tmp_path: Path) -> LinkSwap:
    return LinkSwap.of_sub(ws.root, tmp_path)


def test_delete_removes_the_checked_image_when_a_link_takes_its_folders_name(
    ws: Workspace, swap: LinkSwap, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws.root / "sub" / "p.png").write_bytes(PNG)
    (swap.outside / "p.png").write_bytes(PNG)
    swap.arm(monkeypatch)
    delete_image(ws, "sub/p.png")
    assert swap.done
    assert not (swap.real / "p.png").exists()
    assert (swap.outside / "p.png").read_bytes() == PNG


def test_move_lands_in_the_checked_folder_when_a_link_takes_its_name(
    ws: Workspace, swap: LinkSwap, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws.root / "p.png").write_bytes(PNG)
    swap.arm(monkeypatch)
    move_image(ws, "p.png", "sub/q.png", sha(PNG))
    assert swap.done
    assert (swap.real / "q.png").read_bytes() == PNG
    assert swap.outside_names() == []


def test_a_save_lands_in_the_checked_folder_when_a_link_takes_its_name_before_publishing(
    ws: Workspace, swap: LinkSwap, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Swapped after the staged file was written and the name checked, right before the link that
    publishes it: the image takes its name beside the staged file, in the real folder."""
    swap.arm(monkeypatch, on=("link",))
    saved = save_image(ws, InlineImage(PNG), target_path="sub/x.png")
    assert swap.done
    assert saved.path == "sub/x.png" and (swap.real / "x.png").read_bytes() == PNG
    assert sorted(p.name for p in swap.real.iterdir()) == ["x.png"]  # the staged file is gone
    assert swap.outside_names() == []


# ------------------------------------------------------------------ what no client could show (decision 1125)


def _noise(fmt: str) -> bytes:
    out = io.BytesIO()
    Image.effect_noise((64, 48), 60).convert("RGB").save(out, format=fmt)
    return out.getvalue()


def test_load_refuses_a_cut_or_oversized_image_a_client_would_choke_on(ws: Workspace) -> None:
    wide = io.BytesIO()
    Image.new("1", (8001, 2)).save(wide, format="PNG")
    files = {
        "cut.png": _noise("PNG")[:-200],
        "cut.jpg": _noise("JPEG")[:-200],
        "cut.webp": _noise("WEBP")[:-200],
        "head.png": PNG[:30],  # the signature and part of IHDR
        "wide.png": wide.getvalue(),
    }
    for name, data in files.items():
        (ws.root / name).write_bytes(data)
    for name in files:
        with pytest.raises(UnsupportedFormat, match=f"^'{name}' .*kb_download_file returns its bytes"):
            load_image(ws, name)
        assert (ws.root / name).read_bytes() == files[name]


def test_save_refuses_a_cut_image_and_leaves_nothing(ws: Workspace) -> None:
    whole = _noise("JPEG")
    text = base64.b64encode(whole).decode()
    with pytest.raises(UnsupportedFormat, match=r"^The image cannot be read as a JPEG: it is truncated"):
        save_image(ws, decode_image_data(text[: len(text) // 2]), target_path="docs/a.jpg")
    assert tree(ws.root) == []
    assert save_image(ws, decode_image_data(text), target_path="docs/a.jpg").size == len(whole)


def test_a_download_cut_short_is_refused_and_leaves_nothing(ws: Workspace, server: TlsServer) -> None:
    server.routes["/f"] = Reply(body=_noise("PNG")[:-100], headers={"Content-Type": "image/png"})
    policy = DownloadPolicy.from_hosts(["127.0.0.1"])
    with pytest.raises(UnsupportedFormat, match=r"^The downloaded image cannot be read as a PNG.*Nothing was saved"):
        save_image(ws, RemoteImage(server.url("/f")), policy=policy)
    assert tree(ws.root) == []


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ("/home/me/Pictures/pic.png", "It looks like a file path: data takes the image's bytes, never a path"),
        ("file:///home/me/pic.png", "It looks like a file path"),
        ("C:\\Users\\me\\pic.jpg", "It looks like a file path"),
        ("img/shot.jpg", "For a file in the knowledge base, kb_move_image moves or renames it"),
        ("pic.webp", "send its bytes as base64 (the output of `base64 -w0 <file>`)"),
        ("https://example.com/pic.png?sig=1", "send file: {download_url: <the URL>, file_id: <any name for it>}"),
    ],
)
def test_data_holding_a_path_or_url_says_what_to_send_instead(data: str, words: str) -> None:
    """Decision 1128: agents pass the path or URL of the image they mean as `data`."""
    with pytest.raises(InvalidArgument, match=r"^data is not valid standard base64") as refused:
        decode_image_data(data)
    assert words in str(refused.value)


def test_plain_bad_base64_gets_no_guess() -> None:
    with pytest.raises(InvalidArgument) as refused:
        decode_image_data("abc!def")
    assert "looks like" not in str(refused.value)
