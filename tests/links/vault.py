"""A small Obsidian-style vault made for the link tests (the shared corpora have no
wikilinks): wikilinks, aliases, embeds, tags, reference links, fragments, code that
hides links, a CRLF file and a BOM file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

BOM = b"\xef\xbb\xbf"

FILES: dict[str, bytes] = {
    "Home.md": (
        b"---\ntags: [hub, project/alpha]\naliases: [Start, Index page]\n---\n"
        b"# Home\n\n"
        b"Read [[Getting Started]] first, then [[guides/Setup|the setup]] and [[Setup#Install]].\n\n"
        b"See the [guide](guides/setup.md#install) and [the FAQ][faq]. #welcome\n\n"
        b"![[diagram.png]] and ![[missing.png]] and ![logo](img/logo.png) and ![gone](img/gone.png)\n\n"
        b"`[[Not A Link]]` and <!-- [[Hidden]] [x](hidden.md) -->\n\n"
        b"```\n[[Fenced]] [y](fenced.md)\n```\n\n"
        b"    [z](indented.md)\n\n"
        b"[faq]: notes/faq.md\n"
    ),
    "Getting Started.md": b"# Getting Started\n\nGo back [[Home]] or [[Start]]. See [[Note]] and [[Ghost]].\n",
    "guides/Setup.md": (
        b"# Setup\r\n\r\n## Install\r\n\r\nBack to [home](../Home.md) and [faq](../notes/faq.md#top).\r\n"
        b"Block ref [[Getting Started#^intro]].\r\n"
    ),
    "notes/faq.md": BOM
    + b"# FAQ\n\nSee [[Home#Home]] and [setup](../guides/Setup.md) and [[Setup#Nope]]. #faq/general\n",
    "a/Note.md": b"# Note A\n\nSee [[Home]].\n",
    "b/Note.md": b"# Note B\n\nLonely #tag-b.\n",
    "lonely.md": b"# Lonely\n\nNo links at all. [web](https://example.com) [abs](/root.md)\n",
    "diagram.png": b"\x89PNG\r\n\x1a\n",
    "img/logo.png": b"\x89PNG\r\n\x1a\n",
}


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write ``files`` (path under ``root`` -> text, UTF-8, or bytes), folders included."""
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    return root


def write_vault(root: Path) -> Path:
    return write_files(root, FILES)
