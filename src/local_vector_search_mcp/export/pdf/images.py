"""Local pictures: resolved through the path guard, downsampled per profile with Pillow.

Nothing is ever fetched: remote, absolute and ``data:`` references become
placeholders, like missing, unreadable or oversized files. SVG pictures are
drawn as vector graphics (svg.py), or become placeholders when they cannot be. Pictures are sized
at their physical size (pixels / DPI, 96 DPI when the file does not say),
shrunk to the frame, and re-encoded only when they carry more pixels than the
profile's DPI needs at that size (an ICC profile travels along); JPEG and PNG
files already small enough are embedded unchanged (spec/decisions.md).
"""

from __future__ import annotations

import io
import os
import posixpath
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from PIL import Image, ImageOps

from ...errors import KbError
from ...paths import PathGuard
from .styles import Profile
from .svg import Vector, load_svg

__all__ = ["MAX_FILE_BYTES", "MAX_PIXELS", "ImageStore", "Picture", "Vector"]

MAX_FILE_BYTES = 50 * 1024 * 1024
# Decoding costs 4 bytes a pixel: 40 MP is 160 MB, the most one picture may take.
MAX_PIXELS = 40_000_000
_SUPPORTED = {".png", ".jpg", ".jpeg", ".gif", ".webp"}


@dataclass(frozen=True)
class Picture:
    """An image ready for reportlab: a file path or encoded bytes, and its size in points."""

    source: str | io.BytesIO
    width: float
    height: float


@dataclass(frozen=True)
class Missing:
    reason: str


class ImageStore:
    """Loads the pictures of one export; one decoded copy per (file, box)."""

    def __init__(self, guard: PathGuard, profile: Profile) -> None:
        self.guard = guard
        self.profile = profile
        self._cache: dict[tuple[str, int, int], Picture | Vector | Missing] = {}
        self._names: dict[str, list[str]] | None = None

    def resolve(self, src: str, chapter: str) -> tuple[str, Path] | Missing:
        """The root-relative path and file of ``src`` written in ``chapter``."""
        parts = urlsplit(src.strip())
        if parts.scheme or parts.netloc or src.strip().startswith(("/", "\\")):
            return Missing("remote and absolute images are never fetched")
        if not parts.path:
            return Missing("empty image reference")
        folder = chapter.rsplit("/", 1)[0] if "/" in chapter else ""
        joined: list[str] = folder.split("/") if folder else []
        for part in unquote(parts.path).replace("\\", "/").split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not joined:
                    return Missing("it points outside the knowledge base")
                joined.pop()
            else:
                joined.append(part)
        try:
            return self.guard.resolve("/".join(joined))
        except KbError:
            return Missing("its path is not permitted")

    def resolve_embed(self, name: str, chapter: str) -> tuple[str, Path] | Missing:
        """The file of an Obsidian embed ``![[name]]`` written in ``chapter``, found as the link
        graph finds it (decision 484): ``./``/``../`` from the chapter's folder, else the path from
        the root, else the file of that name anywhere (the chapter's own folder first, then the
        shortest path, then in path order). ``name`` is a path as written, not a URL."""
        name = name.strip().replace("\\", "/")
        if not name or name.startswith("/") or urlsplit(name).scheme:
            return Missing("remote and absolute images are never fetched")
        folder = chapter.rsplit("/", 1)[0] if "/" in chapter else ""
        written = posixpath.normpath(posixpath.join(folder, name) if name.startswith(("./", "../")) else name)
        if written == ".." or written.startswith("../"):
            return Missing("it points outside the knowledge base")
        if name.startswith(("./", "../")) or os.path.lexists(self.guard.root / written):
            return self._guarded(written)
        # a bare name, or a path's tail (``![[deep/pic.png]]``): the file of that name anywhere
        found = self._named(written, folder)
        # none: loading it as written then says what is wrong (does not exist, ...)
        return self._guarded(found[0] if found else written)

    def find_note(self, name: str, chapter: str) -> str | None:
        """The root-relative ``.md`` path a ``[[name]]`` written in ``chapter`` reaches, found as an
        embed's file is (``.md`` added when the name has none), or None when no such note exists."""
        name = name.strip().replace("\\", "/")
        if not name or name.startswith("/"):
            return None
        if not name.lower().endswith(".md"):
            name += ".md"
        folder = chapter.rsplit("/", 1)[0] if "/" in chapter else ""
        written = posixpath.normpath(posixpath.join(folder, name) if name.startswith(("./", "../")) else name)
        if written == ".." or written.startswith("../"):
            return None
        if os.path.isfile(self.guard.root / written):
            return written
        found = self._named(written, folder)
        return found[0] if found else None

    def _named(self, written: str, folder: str) -> list[str]:
        """Files whose path ends in ``written`` (case-insensitive): the chapter's own folder first,
        then the shortest path, then path order."""
        tail = f"/{written.lower()}"
        named = self._by_name().get(posixpath.basename(written).lower(), [])
        found = [rel for rel in named if f"/{rel.lower()}".endswith(tail)]
        return sorted(found, key=lambda rel: (posixpath.dirname(rel) != folder, rel.count("/"), rel))

    def _guarded(self, rel: str) -> tuple[str, Path] | Missing:
        try:
            return self.guard.resolve(rel)
        except KbError:
            return Missing("its path is not permitted")

    def _by_name(self) -> dict[str, list[str]]:
        """Root-relative paths of every file by lower-case file name (dot folders skipped), walked once."""
        if self._names is None:
            self._names = {}
            root = self.guard.root
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
                for file in filenames:
                    self._names.setdefault(file.lower(), []).append(file if rel_dir == "." else f"{rel_dir}/{file}")
        return self._names

    def load(
        self, src: str, chapter: str, max_width: float, max_height: float, *, embed: bool = False
    ) -> Picture | Vector | Missing:
        where = self.resolve_embed(src, chapter) if embed else self.resolve(src, chapter)
        if isinstance(where, Missing):
            return where
        rel, path = where
        key = (rel, int(max_width), int(max_height))
        if key not in self._cache:
            self._cache[key] = self._load(path, max_width, max_height)
        return self._cache[key]

    def _load(self, path: Path, max_width: float, max_height: float) -> Picture | Vector | Missing:
        suffix = path.suffix.lower()
        if suffix == ".svg":
            drawn = load_svg(path, max_width, max_height)
            return Missing(drawn.reason) if not isinstance(drawn, Vector) else drawn
        if suffix not in _SUPPORTED:
            return Missing("not a supported picture format (png, jpg, gif, webp)")
        try:
            size = os.stat(path).st_size
        except OSError:
            return Missing("the file does not exist")
        if not path.is_file():
            return Missing("it is not a file")
        if size > MAX_FILE_BYTES:
            return Missing("the file is larger than 50 MiB")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                with Image.open(path) as img:
                    return self._prepare(path, img, max_width, max_height)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            # Pillow's bomb limit (89 million pixels) lies above ours: the same reason (decision 365)
            return Missing(f"the picture has more than {MAX_PIXELS // 1_000_000} million pixels")
        except (OSError, ValueError, SyntaxError):
            return Missing("the picture cannot be decoded")

    def _prepare(self, path: Path, img: Image.Image, max_width: float, max_height: float) -> Picture | Missing:
        px_w, px_h = img.size
        if px_w < 1 or px_h < 1:
            return Missing("the picture is empty")
        if px_w * px_h > MAX_PIXELS:
            return Missing(f"the picture has more than {MAX_PIXELS // 1_000_000} million pixels")
        dpi = img.info.get("dpi", (96, 96))
        dpi_x = float(dpi[0]) if dpi and dpi[0] and float(dpi[0]) >= 30 else 96.0
        width, height = px_w * 72 / dpi_x, px_h * 72 / dpi_x
        shrink = min(1.0, max_width / width, max_height / height)
        width, height = width * shrink, height * shrink
        target_w = max(1, round(width / 72 * self.profile.dpi))
        fmt = (img.format or "").upper()
        orientation = img.getexif().get(0x0112, 1) if fmt == "JPEG" else 1
        if fmt in ("JPEG", "PNG") and orientation == 1 and px_w <= target_w * 1.1:
            if fmt == "PNG":
                # reportlab decodes a PNG only when it draws the page, where a truncated or corrupt
                # file failed the whole export: decode it here (it is small) so it becomes a placeholder
                img.load()
            return Picture(str(path), width, height)  # already right: embed the file's own bytes
        if fmt == "JPEG":
            img.draft("RGB", (target_w, max(1, round(target_w * px_h / px_w))))  # decode at reduced size
        if getattr(img, "n_frames", 1) > 1:
            img.seek(0)
        pic = ImageOps.exif_transpose(img) if orientation != 1 else img.copy()
        if pic.width > target_w:
            pic = pic.resize((target_w, max(1, round(target_w * pic.height / pic.width))), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        icc = {"icc_profile": img.info["icc_profile"]} if img.info.get("icc_profile") else {}
        if pic.mode in ("RGBA", "LA") and pic.getchannel("A").getextrema() == (255, 255):
            pic = pic.convert("RGB" if pic.mode == "RGBA" else "L")  # an opaque alpha channel is no reason for PNG
        has_alpha = pic.mode in ("RGBA", "LA", "PA") or (pic.mode == "P" and "transparency" in pic.info)
        if has_alpha or (pic.mode in ("1", "P") and pic.width * pic.height < 250_000):
            pic.save(out, "PNG", optimize=True, **icc)  # keep transparency and crisp palettes
        else:
            pic.convert("L" if pic.mode in ("L", "1") else "RGB").save(
                out, "JPEG", quality=self.profile.jpeg_quality, optimize=True, **icc
            )
        out.seek(0)
        return Picture(out, width, height)
