"""The environments the bench's servers run in: production's, the embedded default's,
and the framework ceiling's."""

from __future__ import annotations

import os
from pathlib import Path

from intake.adapters.sealing import generate_key

ROOT = Path(__file__).resolve().parent.parent
# The per-form ceiling (600 per 10 minutes by default) would refuse a benchmark's load
# from its first second: raised for the run, so the windows are still counted and
# checked on every request but only the per-IP ones could refuse, and none do.
FORM_RATE = "1000000000/600"


def _base_env() -> dict[str, str]:
    """The environment without any INTAKE_ setting of the caller's: each server gets its
    defaults plus what the bench sets. Nor the caller's PYTHONPATH: a server runs the
    code of its install (bench/deployed.py), or the compared tree's (bench/baseline.py)."""
    return {
        k: v for k, v in os.environ.items() if not k.startswith("INTAKE_") and k != "PYTHONPATH"
    }


# Production (PostgreSQL) refuses to start without the key that seals stored secrets:
# one for the whole run, as a deployment has one.
SECRET_KEY = generate_key()


def production_env(database_url: str, redis_url: str, workers: int = 1) -> dict[str, str]:
    return {
        **_base_env(),
        "INTAKE_DATABASE_URL": database_url,
        "INTAKE_SECRET_KEY": SECRET_KEY,
        "INTAKE_REDIS_URL": redis_url,
        "INTAKE_TRUSTED_PROXIES": "127.0.0.1/32",
        "INTAKE_RATE_LIMIT_PUBLIC_FORM": FORM_RATE,
        "INTAKE_WORKERS": str(workers),
    }


def embedded_env(database_path: Path) -> dict[str, str]:
    return {
        **_base_env(),
        "INTAKE_DATABASE_URL": f"sqlite:///{database_path}",
        "INTAKE_TRUSTED_PROXIES": "127.0.0.1/32",
        "INTAKE_RATE_LIMIT_PUBLIC_FORM": FORM_RATE,
        "INTAKE_WORKERS": "1",
    }


def ceiling_env() -> dict[str, str]:
    """The bench's own package importable, ahead of whatever PYTHONPATH holds."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    base = {k: v for k, v in os.environ.items() if not k.startswith("INTAKE_")}
    return {**base, "PYTHONPATH": path}
