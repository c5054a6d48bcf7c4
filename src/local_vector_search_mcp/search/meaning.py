"""Chunks whose text says nothing a reader would look for, left out of the semantic list.

An embedding of a chunk that holds no prose is not a neighbour of anything in particular, so it
lands near every query the model understands poorly (a typo, a rare word, a name the model never
saw): the rust-book's legacy link targets (``<a id="traits-defining-shared-behavior"></a>``,
19 chunks) filled a third of hybrid's ten for ``borowing``; VitePress pages open with front
matter of layout switches alone (``aside: false``), which did the same for ``nextTick()``, and
front matter of English keys (``outline: deep``, ``pageClass: api``) was the model's nearest
passage to English questions on Chinese pages. A front matter chunk is the page's metadata: the
page's other chunks are embedded with its path and heading, and its words stay findable in lexical
search, where a match on them is a reason (decisions 790, 791, 793, 1014).
"""

from __future__ import annotations

from ..index.port import ChunkHit
from ..markdown.html_text import MARKUP, WORD

__all__ = ["is_markup_only", "semantic_worthy"]


def is_markup_only(text: str) -> bool:
    """Whether ``text`` holds no letter or digit outside HTML markup (tags, comments, scripts:
    what the index reads of an HTML block, decision 1025)."""
    word = WORD.search(text)
    if word is None:
        return True
    tag = text.find("<")
    if tag < 0 or word.start() < tag:  # a word before any markup: nearly every chunk stops here
        return False
    return not WORD.search(MARKUP.sub(" ", text))


def semantic_worthy(hit: ChunkHit) -> bool:
    """Whether the semantic list may rank ``hit`` (see the module docstring)."""
    if hit.anchor.startswith("frontmatter~"):
        return False
    return not is_markup_only(hit.text)
