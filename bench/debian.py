"""A command a bench needs, taken from Debian's packages when it is missing and the bench
runs as root (wrk, bogofilter)."""

from __future__ import annotations

import os
import shutil
import subprocess


def command_from_debian(command: str, package: str) -> str | None:
    """`command` on PATH; when missing, installed from `package` if we may (root with
    apt-get, the package lists refreshed once if the first try fails). None otherwise."""
    found = shutil.which(command)
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print(f"{command} is missing: installing Debian's package", flush=True)
    install = ["apt-get", "install", "-y", "-q", package]
    if subprocess.run(install, check=False, stdout=subprocess.DEVNULL).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], check=False, stdout=subprocess.DEVNULL)
        subprocess.run(install, check=False, stdout=subprocess.DEVNULL)
    return shutil.which(command)
