"""A real `intake serve` process for the attacks where the socket matters: the peer
address the server sees, slow and endless senders, and the server's own memory.

The process runs on a SQLite file of its own; forms and keys are made in-process on the
same file (the command line has its own suite), and the process is stopped, killed if it
must be, when the test ends.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import psutil

from intake.config import Settings
from intake.domain.model import FormMode
from intake.library_runtime import open_runtime
from tests.support.processes import ServedProcess, clean_env


class Served(ServedProcess):
    """A running `intake serve`: where it listens, its process and how it was set up."""

    def rss(self) -> int:
        """Resident memory of the server, its worker processes included."""
        parent = psutil.Process(self.pid)
        return sum(p.memory_info().rss for p in [parent, *parent.children(recursive=True)])

    def form(self, *, mode: FormMode = FormMode.PUBLIC) -> dict[str, str]:
        """A new workspace with one form and one API key: their ids and secrets."""

        async def make() -> dict[str, str]:
            async with open_runtime(Settings.from_env(self.env)) as runtime:
                services = runtime.services
                workspace = await services.workspaces.create("Security")
                form = await services.forms.create(workspace.workspace_id, mode=mode)
                key = await services.keys.create(workspace.workspace_id)
            return {
                "workspace_id": workspace.workspace_id,
                "form_id": form.form_id,
                "public_form_key": form.public_form_key,
                "api_key": key.secret,
            }

        return anyio.run(make)


@contextmanager
def serve(directory: Path, **env: str) -> Iterator[Served]:
    """`intake serve` on a free port with a fresh database in `directory`; `env` adds
    INTAKE_* settings. It is stopped with SIGINT, as Ctrl-C would; one still holding
    connections after the deadline is killed, so that no test leaves a process behind."""
    settings = clean_env(
        **{
            "INTAKE_DATABASE_URL": f"sqlite:///{directory / 'intake.db'}",
            "INTAKE_LOG_LEVEL": "warning",
            **env,
        }
    )
    with Served(settings, directory / "serve.log", stop_signal=signal.SIGINT) as served:
        yield served
    log = served.log_text()
    assert "Traceback" not in log, log
