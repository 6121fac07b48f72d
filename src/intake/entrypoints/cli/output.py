"""What a command prints: one JSON document with `--json`, short readable lines without.

Everything a command has to say goes through `Output`, so the two forms cannot drift
apart and an error is reported the same way by every command.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TextIO


class Output:
    def __init__(
        self, *, json_mode: bool, stdout: TextIO | None = None, stderr: TextIO | None = None
    ) -> None:
        self.json_mode = json_mode
        # Looked up at call time, not import time, so a redirected sys.stdout is honoured.
        self._stdout = stdout
        self._stderr = stderr

    @property
    def stdout(self) -> TextIO:
        return self._stdout or sys.stdout

    @property
    def stderr(self) -> TextIO:
        return self._stderr or sys.stderr

    def result(self, document: Mapping[str, object], lines: Iterable[str]) -> None:
        """The command's answer: `document` with --json, else `lines`."""
        if self.json_mode:
            self.stdout.write(dumps(document) + "\n")
        else:
            for line in lines:
                self.stdout.write(line + "\n")
        self.stdout.flush()

    def note(self, message: str) -> None:
        """A remark for the person at the terminal; stderr, so it never mixes into data."""
        self.stderr.write(message + "\n")
        self.stderr.flush()

    def error(self, message: str) -> None:
        self.stderr.write(f"intake: error: {message}\n")
        self.stderr.flush()
        if self.json_mode:
            self.stdout.write(dumps({"ok": False, "error": message}) + "\n")
            self.stdout.flush()


def dumps(document: Mapping[str, object]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2)


def text(value: object) -> str:
    """One value as a `key=value` line shows it."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(text(item) for item in value) or "-"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def key_values(view: Mapping[str, object], *, skip: Sequence[str] = ()) -> list[str]:
    return [f"{key}={text(value)}" for key, value in view.items() if key not in skip]


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """Left-aligned columns, for listings read by people (scripts use --json)."""
    cells = [list(headers)] + [[text(value) for value in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
