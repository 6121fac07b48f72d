"""One environment variable: its name, its default, how its text is read, and its doc."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

from attrs import frozen

from intake.domain.ratelimit import RateRule
from intake.domain.sealing import SecretKeyError, parse_key

T = TypeVar("T")
# Reads a variable's text (never blank) into its value: (name, text) -> value. The name
# is for the message of a refusal, which always names the variable.
Parser = Callable[[str, str], T]
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the variable."""


@frozen
class Variable(Generic[T]):
    """An environment variable, as docs/configuration.md's table shows it: a value unset
    or blank is the default."""

    name: str
    default: T
    parse: Parser[T]
    doc: str  # the table's "meaning", one line of Markdown
    shown_default: str | None = None  # the table's "default" when the value says too little

    def read(self, env: Mapping[str, str]) -> T:
        raw = env.get(self.name, "").strip()
        return self.parse(self.name, raw) if raw else self.default

    def default_text(self) -> str:
        """The default as a value of the variable is written: `false`, `2` for 2.0."""
        if isinstance(self.default, bool):
            return str(self.default).lower()
        if isinstance(self.default, float):
            return f"{self.default:g}"
        return str(self.default)

    def default_cell(self) -> str:
        if self.shown_default is not None:
            return self.shown_default
        if self.default is None:
            return "unset"
        return f"`{self.default_text()}`"


def text(name: str, raw: str) -> str:
    return raw


def lowercase(name: str, raw: str) -> str:
    return raw.lower()


def choice(*allowed: str) -> Parser[str]:
    def parse(name: str, raw: str) -> str:
        value = raw.lower()
        if value not in allowed:
            raise ConfigError(f"{name} must be one of {', '.join(allowed)}, not {raw!r}")
        return value

    return parse


def integer(*, minimum: int = 1, maximum: int | None = None) -> Parser[int]:
    def parse(name: str, raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a whole number, not {raw!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise ConfigError(f"{name} is out of range: {value}")
        return value

    return parse


def seconds(*, maximum: float | None = None) -> Parser[float]:
    def parse(name: str, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a number, not {raw!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(f"{name} must be a finite number of seconds above zero, not {raw!r}")
        if maximum is not None and value > maximum:
            raise ConfigError(f"{name} is out of range: at most {maximum:g} seconds")
        return value

    return parse


def secret(min_length: int) -> Parser[str]:
    def parse(name: str, raw: str) -> str:
        # The message of a refusal never quotes the secret.
        if len(raw) < min_length:
            raise ConfigError(f"{name} must be at least {min_length} characters long")
        return raw

    return parse


def sealing_key(name: str, raw: str) -> str:
    try:
        parse_key(raw)
    except SecretKeyError as error:  # its message never quotes the key
        raise ConfigError(f"{name}: {error}") from None
    return raw.strip()


def sealing_keys(name: str, raw: str) -> tuple[str, ...]:
    return tuple(sealing_key(name, part) for part in raw.split(",") if part.strip())


def boolean(name: str, raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be true or false, not {raw!r}")


def rate(name: str, raw: str) -> RateRule:
    try:
        return RateRule.parse(raw)
    except ValueError as error:
        raise ConfigError(f"{name}: {error}") from None


def networks(name: str, raw: str) -> tuple[Network, ...]:
    try:
        return tuple(
            ipaddress.ip_network(part.strip(), strict=False)
            for part in raw.split(",")
            if part.strip()
        )
    except ValueError as error:
        raise ConfigError(f"{name}: {error}") from None
