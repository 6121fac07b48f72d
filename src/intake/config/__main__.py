"""`python -m intake.config --markdown`: prints docs/configuration.md's table."""

from __future__ import annotations

import argparse
import sys

from intake.config.table import markdown_table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m intake.config")
    parser.add_argument(
        "--markdown", action="store_true", required=True, help="print the table of variables"
    )
    parser.parse_args(argv)
    sys.stdout.write(markdown_table())


if __name__ == "__main__":
    main()
