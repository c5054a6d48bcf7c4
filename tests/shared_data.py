"""Where the read-only shared corpora and labelled queries live (``../shared`` next to the checkout).

``LVSM_SHARED`` overrides the location; tests that need the data skip when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

_CANDIDATES = [
    Path(os.environ["LVSM_SHARED"]) if os.environ.get("LVSM_SHARED") else None,
    Path(__file__).resolve().parents[2] / "shared",
    Path("/work/shared"),
]
SHARED = next((p for p in _CANDIDATES if p is not None and (p / "corpora").is_dir()), Path("/nonexistent/shared"))
CORPORA = SHARED / "corpora"
