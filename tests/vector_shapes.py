"""Synthetic vectors shaped like the bundled e5 model's, for recall tests of the vector layouts."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def embedding_like(n: int, seed: int, dims: int = 384, decay: float = 0.3) -> npt.NDArray[np.float32]:
    """Unit vectors shaped like the bundled e5 model's: a common offset plus a slowly decaying
    spectrum in a random basis plus weak clusters; 95 % of the components are under 0.1 in
    magnitude and the largest about 0.17. The basis, offset and clusters are fixed (seeds 0-2);
    ``seed`` draws the rows; ``decay`` is the spectrum's exponent (k^-decay)."""
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((dims, dims)))[0]
    common = np.random.default_rng(1).standard_normal(dims)
    common /= np.linalg.norm(common)
    spectrum = np.arange(1, dims + 1) ** -decay
    spectrum /= np.linalg.norm(spectrum)
    centres = np.random.default_rng(2).standard_normal((200, dims)) / np.sqrt(dims)
    rng = np.random.default_rng(seed)
    v = 1.5 * common + (rng.standard_normal((n, dims)) * spectrum) @ basis + 0.2 * centres[rng.integers(0, 200, n)]
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
