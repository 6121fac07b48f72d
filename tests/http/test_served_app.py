"""The application `intake serve` runs: once started, what start-up made is set apart
from the garbage collector (gc.freeze), so that its full passes do not walk it again,
and its young objects are collected less often; and its log records are made without
the facts no line holds."""

from __future__ import annotations

import os
import subprocess
import sys

from intake.entrypoints.http.app import YOUNG_COLLECTION_THRESHOLD

# In a process of its own: frozen objects are never freed, which a test process that
# makes hundreds of applications must not have, nor its logging changed.
_STARTS = """
import asyncio, gc, logging
from intake.entrypoints.http.app import create_app, served_app

async def main():
    for make in (create_app, served_app):
        app = make()
        async with app.router.lifespan_context(app):
            print(make.__name__, gc.get_freeze_count())
            print(make.__name__ + "_young", gc.get_threshold()[0])
        print(make.__name__ + "_skips", logging._srcfile is None and not logging.logThreads)

asyncio.run(main())
"""


def test_only_the_served_application_sets_its_start_up_apart_from_the_collector() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTAKE_")}
    done = subprocess.run(
        [sys.executable, "-c", _STARTS],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    found = dict(line.split() for line in done.stdout.splitlines())
    assert found["create_app"] == "0"
    assert int(found["served_app"]) > 10_000
    assert found["create_app_young"] == "700"  # Python's default, left to an embedding program
    assert found["served_app_young"] == str(YOUNG_COLLECTION_THRESHOLD)
    assert found["create_app_skips"] == "False"
    assert found["served_app_skips"] == "True"
