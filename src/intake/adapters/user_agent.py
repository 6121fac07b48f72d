"""The User-Agent intake's own HTTP requests carry: `intake/<version>`, the version from
the installed package's metadata."""

from __future__ import annotations

from importlib import metadata


def _version() -> str:
    try:
        return metadata.version("intake")
    except metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "unknown"


USER_AGENT = f"intake/{_version()}"
