"""Per-query vector products, kept off BLAS's thread pool.

OpenBLAS hands any matrix-vector product above a few thousand elements to its thread pool; on a
busy machine waking that pool cost ~8 CPU-ms per query whatever the size (2,000 or 50,000 rows
alike, decision 395), where numpy's own single-threaded loop is memory-bound at the speed of one
BLAS thread. A server started by an MCP client rarely sets ``OPENBLAS_NUM_THREADS``, so every
product a query makes goes through :func:`dot_rows` instead of ``@``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["dot_rows"]


def dot_rows(rows: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``rows @ vector`` in one thread; equal rows get equal values wherever they sit."""
    values: npt.NDArray[np.float32] = np.einsum("ij,j->i", rows, vector)
    return values
