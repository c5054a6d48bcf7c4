"""A knowledge base full of the odd files real ones hold, and tools to snapshot and restore it.

Every real knowledge base has one Latin-1 export, a binary misnamed ``.md``, a
file nobody can read, a Windows file with a BOM and CRLF, a generated file
with one enormous line, a deeply nested outline. The fault suite runs every
tool against this tree and checks that nothing outside the targeted file ever
changes.
"""

from __future__ import annotations

import os
from pathlib import Path

INDEX_FOLDER = ".local-vector-search-mcp"

GOOD: dict[str, bytes] = {
    "guide/editing.md": (
        b"---\ntitle: Editing\n---\n# Editing\n\nEdits are kept safe by optimistic concurrency.\n\n"
        b"## Tables\n\n| name | value |\n|---|---|\n| alpha | 1 |\n| beta | 2 |\n\n"
        b"- one\n  - nested\n- two\n\n> quoted text\n\n```python\nprint('x')\n```\n"
    ),
    "notes.md": b"# Notes\n\nPlain words about search and ranking.\n",
    "empty.md": b"",
    "deep/er/still/page.md": b"# Deep\n\nA page in a deep folder.\n",
}

# Odd, but each a file a user really has. Latin-1 and UTF-16 exports, binaries, NUL bytes.
ODD: dict[str, bytes] = {
    "latin1.md": "# Caf\u00e9\n\nR\u00e9sum\u00e9 na\u00efve, export from an old editor.\n".encode("latin-1"),
    "bad-bom.md": b"\xff\xfe# Not UTF-8\n",
    "utf16.md": "# Sixteen\n\nWide text.\n".encode("utf-16"),
    "image.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8,
    "nul.md": b"# Has\x00NUL\n\nbytes\x00inside\n",
    "bom-crlf.md": (
        b"\xef\xbb\xbf---\r\ntitle: BOM\r\n---\r\n# BOM and CRLF\r\n\r\n| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n"
    ),
    "lone-cr.md": b"# Old Mac\r\rLine endings are CR only.\r",
    "longline.md": b"# Long\n\n" + b"word " * 40_000 + b"\n",
    "deep-quotes.md": b"> " * 300 + b"deep quote\n",
    "deep-lists.md": b"".join(b"  " * i + b"- item\n" for i in range(200)),
    "wide-table.md": b"| " + b" | ".join(b"c%d" % i for i in range(300)) + b" |\n|" + b"---|" * 300 + b"\n",
    "bad-front-matter.md": b"---\ntitle: [unclosed\n: : :\n---\n# After\n",
    "unclosed-fence.md": b"# Fence\n\n```\nnever closed\n" + b"code\n" * 100,
    "html.md": b"<!-- unclosed comment\n\n<div>\n# not a heading\n",
    "surrogates.md": b"# Bad \xed\xa0\x80 surrogate\n",
    # Assets: a real 1x1 PNG, a text file calling itself an image, a truncated GIF.
    "img/pixel.png": bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    ),
    "img/fake.png": b"# I am Markdown, not a picture\n",
    "img/cut.gif": b"GIF89a\x01\x00",
}


def build(root: Path, outside: Path) -> dict[str, bytes]:
    """Create the tree under ``root`` (and a secret in ``outside``); return the regular files' bytes."""
    root.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.md").write_bytes(b"# Secret\n\nTOP SECRET outside the root\n")
    files = {**GOOD, **ODD}
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # Entries that are not regular files inside the root.
    (root / "escape.md").symlink_to(outside / "secret.md")
    (root / "escape-dir").symlink_to(outside)
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    (root / "folder.md").mkdir()
    os.mkfifo(root / "fifo.md")  # opening it for reading would block forever
    unreadable = root / "unreadable.md"
    unreadable.write_bytes(b"# Unreadable\n")
    unreadable.chmod(0)  # root can still read it; everyone else cannot
    files["unreadable.md"] = b"# Unreadable\n"
    return files


def snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (index folder excluded), without following links or FIFOs."""
    out: dict[str, bytes] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != INDEX_FOLDER)
        for name in names:
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            if rel == "unreadable.md":
                path.chmod(0o600)
                out[rel] = path.read_bytes()
                path.chmod(0)
            else:
                out[rel] = path.read_bytes()
    return out


def restore(root: Path, before: dict[str, bytes]) -> None:
    """Put the tree back to ``before`` (after an example changed or created files)."""
    now = snapshot(root)
    for rel in now.keys() - before.keys():
        (root / rel).unlink()
    for rel, data in before.items():
        if now.get(rel) != data:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if rel == "unreadable.md" and path.exists():
                path.chmod(0o600)
            path.write_bytes(data)
            if rel == "unreadable.md":
                path.chmod(0)
