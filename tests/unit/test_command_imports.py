"""What an `intake` command loads before it uses it: the libraries that only some
commands need stay unloaded until used (the start of every command is what operators'
scripts pay, docs/performance.md "Command startup"). Checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Loaded on first use only: by a seal or open, a file operation, a mail, an address check,
# a wildcard among a form's allowed origins.
LATE = (
    "cryptography",
    "anyio._backends._asyncio",
    "email.headerregistry",
    "email_validator",
    "publicsuffixlist",
)

_PROBE = """
import sys
from pathlib import Path
import intake.entrypoints.cli
from intake.adapters.blobs.local import LocalBlobStore
from intake.adapters.sealing import AeadSealer
from intake.domain.sealing import SealedPlace

sealer = AeadSealer(bytes(32))
LocalBlobStore(sys.argv[1])
print(",".join(name for name in sys.argv[2:] if name in sys.modules))
place = SealedPlace("forms", "challenge_secret", "frm_1")
assert sealer.open(sealer.seal(b"secret", place), place) == b"secret"
print("cryptography" in sys.modules)
"""


def test_a_command_loads_no_library_it_has_not_used_yet(tmp_path: Path) -> None:
    loaded_early, loaded_by_seal = _probe(_PROBE, str(tmp_path), *LATE)

    assert loaded_early == ""
    assert loaded_by_seal == "True"


# What `intake form show` and the other form commands do not reach: the other owner-side
# services, and the store's outbox side (its deliveries and their fan-out).
NOT_FOR_FORMS = (
    "intake.service.admin.chat_destinations",
    "intake.service.admin.webhooks",
    "intake.service.admin.recipients",
    "intake.service.admin.deliveries",
    "intake.service.admin.exports",
    "intake.service.admin.erasure",
    "intake.adapters.sql.deliveries",
    "intake.adapters.sql.fan_out",
)

_FORMS_PROBE = """
import asyncio
import sys
import intake.entrypoints.cli.forms
from intake.admin_runtime import open_admin_runtime
from intake.config import Settings

async def main():
    settings = Settings.from_env({"INTAKE_DATABASE_URL": f"sqlite:///{sys.argv[1]}"})
    async with open_admin_runtime(settings) as runtime:
        runtime.services.forms
        print(",".join(name for name in sys.argv[2:] if name in sys.modules))
        runtime.services.deliveries
        runtime.store.deliveries
        print(",".join(name for name in sys.argv[2:] if name not in sys.modules))

asyncio.run(main())
"""


def test_a_form_command_loads_the_services_and_store_parts_it_uses_alone(tmp_path: Path) -> None:
    loaded_by_forms, missing_once_asked = _probe(
        _FORMS_PROBE, str(tmp_path / "intake.db"), *NOT_FOR_FORMS
    )

    assert loaded_by_forms == ""
    # Asked for, the deliveries bring the webhooks and the store's outbox side with them.
    missing = missing_once_asked.split(",")
    assert "intake.service.admin.webhooks" not in missing
    assert "intake.adapters.sql.deliveries" not in missing


def _probe(script: str, *arguments: str) -> list[str]:
    """The lines `script` prints, run in a fresh interpreter: what a new process imports."""
    done = subprocess.run(
        [sys.executable, "-c", script, *arguments],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.splitlines()
