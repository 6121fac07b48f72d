"""`python -m bench.spam [options]`; `--help` lists them."""

from __future__ import annotations

import sys

from bench.spam.bogofilter import BogofilterError
from bench.spam.corpus import CorpusError
from bench.spam.intake_run import RunError
from bench.spam.options import parse
from bench.spam.run import log, run


def main() -> int:
    options = parse()
    try:
        return run(options)
    except (BogofilterError, CorpusError, RunError) as error:
        log(f"the bench could not run: {error}")
        return 2
    except KeyboardInterrupt:
        log("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
