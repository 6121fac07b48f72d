"""One run of `make bench-spam` (docs/scoring.md, "Measured"):

1. the corpus, fetched once into a cache outside the repository, in its fixed order;
2. bogofilter in both modes, each in a thread of its own (its work is in subprocesses),
   while intake runs in this one: in process, every label taught, then only its
   mistakes corrected;
3. the figures over the second half, side by side, and the targets.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from bench.spam import bogofilter, corpus, intake_run, metrics, report, targets, timing
from bench.spam.metrics import Scored
from bench.spam.modes import Mode
from bench.spam.options import Options

PROGRESS_EVERY = 500
_printing = threading.Lock()


def log(message: str) -> None:
    with _printing:
        print(f"[bench-spam {time.strftime('%H:%M:%S')}] {message}", flush=True)


def progress(label: str, total: int) -> Callable[[int], None]:
    def say(done: int) -> None:
        if done % PROGRESS_EVERY == 0 or done == total:
            log(f"{label}: {done}/{total}")

    return say


def _bogofilter_runs(
    pool: ThreadPoolExecutor, command: str, mails: list[corpus.Mail], stop: threading.Event
) -> dict[Mode, Future[list[Scored]]]:
    return {
        mode: pool.submit(
            bogofilter.run,
            command,
            mails,
            mode,
            progress(f"bogofilter, {mode.title}", len(mails)),
            stop,
        )
        for mode in Mode
    }


def _intake(options: Options, mails: list[corpus.Mail], mode: Mode) -> intake_run.IntakeRun:
    say = progress(f"intake, {mode.title}", len(mails))
    return asyncio.run(intake_run.run(mails, mode, per_day=options.per_day, progress=say))


def _run_all(
    options: Options, mails: list[corpus.Mail]
) -> tuple[dict[Mode, intake_run.IntakeRun], dict[Mode, list[Scored]]]:
    command = bogofilter.find_bogofilter()
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=len(Mode)) as pool:
        theirs = _bogofilter_runs(pool, command, mails, stop)
        try:
            ours = {mode: _intake(options, mails, mode) for mode in Mode}
        except BaseException:
            stop.set()  # on an error or an interruption, bogofilter's threads end too
            raise
        return ours, {mode: future.result() for mode, future in theirs.items()}


def run(options: Options) -> int:
    started = time.monotonic()
    log(f"corpus: {corpus.PACKAGE} in {options.cache}")
    mails = corpus.load(options.cache, options.seed)[: options.limit]
    spam = sum(mail.spam for mail in mails)
    ham = len(mails) - spam
    log(f"{len(mails)} mails ({spam} spam, {ham} ham), shuffled with seed {options.seed}")
    ours, theirs = _run_all(options, mails)
    figures = {("intake", mode): metrics.figures_of(run.results) for mode, run in ours.items()}
    figures |= {("bogofilter", mode): metrics.figures_of(r) for mode, r in theirs.items()}
    full, errors = ours[Mode.FULL], ours[Mode.ERRORS]
    assert full.timed is not None  # the full mode times the scoring call
    rows = [(f"{name}, {mode.title}", figures[name, mode]) for name, mode in figures]
    half = len(mails) - len(mails) // 2
    print(f"\nover the second half ({half} mails), intake's form at threshold {full.threshold:g}:")
    print(report.table(rows))
    print("\n" + report.scoring(full.timed, timing.HOW))
    print(
        f"mistakes corrected: intake {errors.corrections} by triage, {errors.settled} "
        f"untouched ones settled by the rule ({options.per_day} submissions a simulated day)"
    )
    checks = targets.checks(
        figures["intake", Mode.FULL],
        figures["intake", Mode.ERRORS],
        figures["bogofilter", Mode.FULL],
        figures["bogofilter", Mode.ERRORS],
        metrics.percentile(full.timed.cpu_us, 0.5),
    )
    print("\ntargets:\n" + report.targets(checks))
    log(f"done in {time.monotonic() - started:.0f} s")
    return 1 if targets.failed(checks) else 0
