"""The variables of the dashboard's pages (docs/dashboard.md). Declared as variables.py
declares the rest, whose table lists them in its order."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from intake.config.variable import ConfigError, Variable


def time_zone(name: str, raw: str) -> ZoneInfo:
    try:
        return ZoneInfo(raw)
    except (ZoneInfoNotFoundError, ValueError):
        message = f"{name} must name a time zone of the tz database (Europe/Paris), not {raw!r}"
        raise ConfigError(message) from None


DASHBOARD_TIMEZONE = Variable(
    "INTAKE_DASHBOARD_TIMEZONE",
    ZoneInfo("UTC"),
    time_zone,
    (
        "the time zone whose midnights divide the days of the dashboard's charts "
        "(`Europe/Paris`, `America/Los_Angeles`) ([dashboard.md](dashboard.md#charts))"
    ),
)
