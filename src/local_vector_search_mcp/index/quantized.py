"""How the compressed vector layouts (``embedding.vectorStorage`` int8 and binary) search.

Both storage adapters use these numbers: the two engines give the same answers only while
their candidate pools and binary centres are made alike (decisions 170, 380, 381).
"""

from __future__ import annotations

__all__ = ["BINARY_MIN_CANDIDATES", "BINARY_OVERFETCH", "CENTRE_SAMPLE", "INT8_MIN_CANDIDATES", "INT8_OVERFETCH"]

# Hamming distance over 384 bits ranks poorly on its own (recall@10 0.64 when only 80
# candidates are re-ranked, 0.97 with 400 on rust-book): re-rank at least this many exactly.
BINARY_OVERFETCH = 8
BINARY_MIN_CANDIDATES = 400
# int8: candidates by the quantized query over the codes, re-scored with the float32 query
# (decision 381; pool 20 already matches a full asymmetric scan on both dev sets)
INT8_OVERFETCH = 2
INT8_MIN_CANDIDATES = 40
# binary: the centre is recomputed (with every row's bits) until this many vectors made it
CENTRE_SAMPLE = 1024
