"""A SQL store's migrations, read from its folder of .sql files, once for both stores.

A migration is a file NNNN_name.sql, numbered from 1 without a gap. Its statements each
end at a line holding only ";", which no statement or function body has: the files stay
plain SQL that psql or sqlite3 runs as they are, and reading them needs no parser. The
comment lines before a statement say why it is there and are not sent.

A repeatable file (migrations/repeatable/name.sql) holds the whole live definition of
something the schema may replace at will, a function: CREATE OR REPLACE, applied after
the numbered migrations whenever its statements differ from those last applied.
"""

from __future__ import annotations

import hashlib
from importlib.resources import files

from attrs import frozen

_END_OF_STATEMENT = "\n;\n"


@frozen
class Migration:
    version: int
    name: str
    # One statement each, run in order in the migration's transaction (SQLite's
    # executescript() would commit on its own, outside it).
    statements: tuple[str, ...]


@frozen
class Repeatable:
    name: str  # "repeatable/" and the file's name without .sql
    statements: tuple[str, ...]

    @property
    def digest(self) -> str:
        """SHA-256 of what it sends (NUL between statements): a comment outside a
        statement changes nothing, so applies nothing."""
        return hashlib.sha256("\0".join(self.statements).encode()).hexdigest()


def load_repeatables(package: str) -> tuple[Repeatable, ...]:
    """The files of the folder `migrations/repeatable` of `package`, by name."""
    folder = files(package).joinpath("migrations").joinpath("repeatable")
    names = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".sql"))
    return tuple(
        Repeatable(
            "repeatable/" + name.removesuffix(".sql"),
            statements_of(folder.joinpath(name).read_text(encoding="utf-8")),
        )
        for name in names
    )


def load_migrations(package: str) -> tuple[Migration, ...]:
    """The migrations in the folder `migrations` of `package`, in order."""
    folder = files(package).joinpath("migrations")
    names = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".sql"))
    # A file missing from a build, or two of one number, fail here rather than in a
    # database.
    if [int(name[:4]) for name in names] != list(range(1, len(names) + 1)):
        raise RuntimeError(f"{package}: migrations not numbered 1 to {len(names)}: {names}")
    return tuple(
        Migration(
            int(name[:4]),
            name.removesuffix(".sql"),
            statements_of(folder.joinpath(name).read_text(encoding="utf-8")),
        )
        for name in names
    )


def statements_of(text: str) -> tuple[str, ...]:
    """The statements of a migration's file, in order, without the comments before each."""
    *chunks, rest = text.split(_END_OF_STATEMENT)
    if _without_leading_comments(rest):
        raise ValueError(f"a statement does not end with a line holding only ';': {rest!r}")
    return tuple(_without_leading_comments(chunk) for chunk in chunks)


def _without_leading_comments(chunk: str) -> str:
    lines = chunk.split("\n")
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("--")):
        lines.pop(0)
    return "\n".join(lines).rstrip()
