"""intake.js's weight against its budget: the file as shipped, gzipped at level 9.

The figure is taken on the file itself, comments and all: minifying only shrinks it, so
a file under the budget here is under it minified too, and no minifier is needed to say
so. `python -m bench.client_size` measures this figure alone.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from typing import Any

from intake.entrypoints.http.client_script import CLIENT_FOLDER

SHIPPED = CLIENT_FOLDER / "intake.js"


def measure() -> dict[str, Any]:
    data = SHIPPED.read_bytes()
    return {
        "file": SHIPPED.name,
        "bytes": len(data),
        "gzip_bytes": len(gzip.compress(data, compresslevel=9, mtime=0)),
    }


def gzip_bytes_of(results: Mapping[str, Any]) -> int | None:
    """The figure the target is about, from a results document (None: not measured)."""
    figure = results.get("client_size")
    return None if figure is None else int(figure["gzip_bytes"])


if __name__ == "__main__":
    size = measure()
    print(f"{size['file']}: {size['bytes']} bytes, {size['gzip_bytes']} gzipped (-9)")
