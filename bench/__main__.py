"""`python -m bench [options]`; `--help` lists them."""

from __future__ import annotations

import sys

from bench.baseline import BaselineError
from bench.options import parse
from bench.run import log, run
from bench.servers import ServerError
from bench.services import ServicesError
from bench.storage import StorageError
from bench.wrk import WrkError


def main() -> int:
    options = parse()
    try:
        return run(options)
    except (BaselineError, ServerError, ServicesError, StorageError, WrkError) as error:
        log(f"the bench could not run: {error}")
        return 2
    except KeyboardInterrupt:
        log("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
