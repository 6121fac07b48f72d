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
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path), *LATE],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    loaded_early, loaded_by_seal = done.stdout.splitlines()

    assert loaded_early == ""
    assert loaded_by_seal == "True"
