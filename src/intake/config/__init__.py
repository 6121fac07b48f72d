"""Configuration from environment variables, one table for every command.

Each variable is declared once (variables.py); docs/configuration.md's table is made
from those declarations: `python -m intake.config --markdown`.
"""

from __future__ import annotations

from intake.config.settings import Settings, default_blob_url
from intake.config.variable import ConfigError, Network
from intake.config.variables import DEFAULT_DATABASE_URL, MAX_DOWNLOAD_TTL

__all__ = [
    "DEFAULT_DATABASE_URL",
    "MAX_DOWNLOAD_TTL",
    "ConfigError",
    "Network",
    "Settings",
    "default_blob_url",
]
