"""An earlier version of intake to measure beside this one in the same run: the tree of a
git ref, exported into a temporary directory outside the repository, run by the same
interpreter and packages with its own source first on PYTHONPATH (its migrations, its
commit function, its worker). Its database is migrated by its own `intake migrate`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from attrs import frozen

ROOT = Path(__file__).resolve().parent.parent


class BaselineError(RuntimeError):
    """The ref could not be found or exported."""


@frozen
class Baseline:
    ref: str
    revision: str
    source: Path  # the tree's src/, to put first on PYTHONPATH

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        path = os.pathsep.join(filter(None, [str(self.source), env.get("PYTHONPATH")]))
        return {**env, "PYTHONPATH": path}


def _git(*argv: str) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, timeout=120, check=False)
    if done.returncode != 0:
        raise BaselineError(f"git {argv[0]} failed: {done.stderr.decode(errors='replace')}")
    return done


@contextlib.contextmanager
def checkout(ref: str) -> Iterator[Baseline]:
    """`ref`'s src/ exported to a temporary directory, removed at the end."""
    revision = _git("rev-parse", "--short", f"{ref}^{{commit}}").stdout.decode().strip()
    root = Path(tempfile.mkdtemp(prefix="intake-bench-baseline-"))
    try:
        archive = root / "tree.tar"
        archive.write_bytes(_git("archive", "--format=tar", revision, "src").stdout)
        with tarfile.open(archive) as tar:
            tar.extractall(root, filter="data")
        archive.unlink()
        if not (root / "src" / "intake").is_dir():
            raise BaselineError(f"{ref} has no src/intake")
        yield Baseline(ref, revision, root / "src")
    finally:
        shutil.rmtree(root, ignore_errors=True)
