"""Is the caller a browser? One whose Accept prefers text/html over JSON."""

from __future__ import annotations


def _quality(accept: str, wanted_type: str, wanted_subtype: str) -> float:
    """The q-value the header gives a type, the most specific matching range winning."""
    best_specificity = -1
    quality = 0.0
    for item in accept.split(","):
        media, *params = item.strip().split(";")
        kind, _, subkind = media.strip().lower().partition("/")
        if kind == wanted_type and subkind == wanted_subtype:
            specificity = 2
        elif kind == wanted_type and subkind == "*":
            specificity = 1
        elif kind == "*" and subkind == "*":
            specificity = 0
        else:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    q = min(1.0, max(0.0, float(value)))
                except ValueError:
                    q = 0.0
        if specificity > best_specificity:
            best_specificity, quality = specificity, q
    return quality


def prefers_html(accept: str | None) -> bool:
    if not accept or "html" not in accept.lower():
        return False
    return _quality(accept, "text", "html") > _quality(accept, "application", "json")
