"""One fuzz target under atheris and libFuzzer, in a process of its own.

    python -m tests.fuzz.harness TARGET [libFuzzer flags] [CORPUS_DIR ...]
    python -m tests.fuzz.harness TARGET path/to/crash-file     # replay one input

libFuzzer ends the process when it stops or finds a crash, so `run.py` starts one of
these per target. Only intake and the multipart parser it uses are instrumented: the
coverage that guides the fuzzer is theirs, not the invariant checks'.
"""

from __future__ import annotations

import sys

import atheris  # type: ignore[import-untyped]


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        sys.exit(f"usage: {argv[0]} TARGET [libFuzzer flags] [CORPUS_DIR ...]")
    with atheris.instrument_imports(include=["intake", "python_multipart"]):
        import intake.domain.controls
        import intake.domain.payload  # noqa: F401
    from tests.fuzz.targets import TARGETS

    name = argv[1]
    if name not in TARGETS:
        sys.exit(f"unknown target {name!r}; one of {', '.join(TARGETS)}")
    target = TARGETS[name]
    atheris.Setup([argv[0], *argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
