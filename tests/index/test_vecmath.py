from __future__ import annotations

import numpy as np

from local_vector_search_mcp.index.vecmath import dot_rows


def test_dot_rows_is_the_matrix_product_and_equal_rows_score_equal() -> None:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((3_000, 384)).astype(np.float32)
    rows[2_999] = rows[7]
    q = rng.standard_normal(384).astype(np.float32)
    got = dot_rows(rows, q)
    assert got.dtype == np.float32 and np.allclose(got, rows @ q, atol=1e-5)
    assert got[7] == got[2_999]
    assert dot_rows(rows[[2_999, 1, 7]], q)[2] == got[7]  # a gathered row scores as in the matrix
