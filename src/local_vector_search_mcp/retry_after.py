"""The ``Retry-After`` header of an HTTP answer, as seconds (RFC 9110 §10.2.3).

One reading for every client of the package that honours it (the embedding endpoint, Notion):
a number of seconds or an HTTP date. Notion's client read only the number and took a date for
no header at all, backing off on its own instead of waiting as asked.
"""

from __future__ import annotations

import math
import time
from email.utils import parsedate_to_datetime

__all__ = ["retry_after"]


def retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header (a number of seconds or an HTTP date), ``None`` if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None or when.tzinfo is None:
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None
