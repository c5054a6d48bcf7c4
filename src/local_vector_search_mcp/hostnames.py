"""How a ``Host`` header and a browser origin are spelled, read one way everywhere.

The configuration check (``server.allowedHosts``, ``server.allowedOrigins``,
``server.corsOrigins``) and the HTTP guard that matches requests against those entries use these
same readings, so an entry the configuration accepts is one a request can match (decision 1031).
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["normalize_origin", "split_host"]


def split_host(value: str, default_port: int | None) -> tuple[str, int | None] | None:
    """``name[:port]`` or ``[v6][:port]`` -> (lower-case name without brackets, port); None if malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    elif value.count(":") == 1:
        name, port_text = value.split(":")
    elif ":" in value:  # a bare IPv6 address is not a valid Host header
        return None
    else:
        name, port_text = value, ""
    if name.endswith(".") and not name.endswith(".."):
        name = name[:-1]  # `localhost.`: the fully qualified form of the same name (DNS's root label)
    if not name:
        return None
    if not port_text:
        return name, default_port
    if not (port_text.isascii() and port_text.isdigit()) or int(port_text) > 65535:  # not `²`, `١٢`
        return None
    return name, int(port_text)


def normalize_origin(value: str) -> str | None:
    """``scheme://host[:port]`` as a browser serialises it (lower case, no default port, no
    trailing slash), or None when ``value`` is no http(s) origin (``null``, a path, a query)."""
    try:
        parts = urlsplit(value.strip().lower().rstrip("/"))
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
        return None
    default = 443 if parts.scheme == "https" else 80
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")
