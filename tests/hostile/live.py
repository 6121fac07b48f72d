"""A real `intake serve` process on a free port, with a SQLite database in a temporary
directory, set up with the installed `intake` command as an operator would."""

from __future__ import annotations

import signal
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from attrs import frozen

from tests.support.processes import ServedProcess, clean_env, run_cli

STARTUP_DEADLINE = 60.0  # seconds for the server to answer /healthz
# High enough that no test run reaches them: a 429 would hide every later step.
UNREACHED_RATE = "1000000/30"


def environment(database: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without its INTAKE_* settings, plus the test's own."""
    return clean_env(
        **{
            "INTAKE_DATABASE_URL": f"sqlite:///{database}",
            "INTAKE_RATE_LIMIT_PUBLIC_BURST": UNREACHED_RATE,
            "INTAKE_RATE_LIMIT_PUBLIC_SUSTAINED": UNREACHED_RATE,
            "INTAKE_RATE_LIMIT_PUBLIC_FORM": UNREACHED_RATE,
            "INTAKE_RATE_LIMIT_SERVER_BURST": UNREACHED_RATE,
            "INTAKE_RATE_LIMIT_SERVER_SUSTAINED": UNREACHED_RATE,
            **extra,
        }
    )


@frozen
class Seeds:
    """What the CLI set up: a paid workspace (so the quota is never the answer), a public
    form, a protected form, a working API key and a revoked one."""

    public_form_id: str
    public_key: str
    protected_form_id: str
    protected_key: str
    api_key: str
    revoked_api_key: str


def seed(env: Mapping[str, str]) -> Seeds:
    workspace = run_cli(env, "workspace", "create", "--name", "Hostile", "--plan", "business")
    ws = workspace["workspace_id"]
    public = run_cli(env, "form", "create", "--workspace", ws, "--name", "Contact")
    protected = run_cli(
        env, "form", "create", "--workspace", ws, "--name", "Orders", "--mode", "protected"
    )
    key = run_cli(env, "key", "create", "--workspace", ws)
    revoked = run_cli(env, "key", "create", "--workspace", ws)
    run_cli(env, "key", "revoke", revoked["key_id"])
    return Seeds(
        public_form_id=public["form_id"],
        public_key=public["public_form_key"],
        protected_form_id=protected["form_id"],
        protected_key=protected["public_form_key"],
        api_key=key["api_key"],
        revoked_api_key=revoked["api_key"],
    )


@contextmanager
def serving(env: Mapping[str, str], log: Path) -> Iterator[str]:
    """`intake serve` on a free port until the block ends; yields its base URL. Output
    goes to `log`. It is stopped with SIGINT, as Ctrl-C would, and must exit with 0."""
    server = ServedProcess(env, log, startup_timeout=STARTUP_DEADLINE, stop_signal=signal.SIGINT)
    with server:
        yield server.base
    code = server.returncode
    assert code == 0, f"intake serve exited with {code}:\n{server.log_text()}"
