"""The dashboard at scale (issue 28: 100,000 submissions in one form, each page under
150 ms at p95): a database of its own seeded in SQL (bench/dashboard_seed.py), a live
`intake serve` on it (one worker, PostgreSQL and Redis, days of Europe/Paris), an owner
signed in through a sign-in link as a person would be, then each page fetched over HTTP
on one kept-alive connection, one request at a time:

- the forms list (50 forms, a 30-day chart each);
- the large form's inbox, first page (its 90-day chart and tab counts with it);
- a search of it for a rare word and for one that every row holds;
- the spam tab;
- a submission's page (one with a dead delivery).

The pages take turns, `rounds` times, so that other work on a shared machine weighs on
all of them alike. The database is dropped at the end.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from bench import machine
from bench.dashboard_seed import COMMON, OTHER_FORMS, OTHER_ROWS, RARE, copies, seed
from bench.deployed import installed
from bench.options import Options
from bench.servers import Server, free_port
from bench.storage import BenchDatabase, intake, provision

TARGET_MS = 150.0  # p95 of each page
ZONE = "Europe/Paris"
PASSWORD = "bench dashboard password"  # noqa: S105 - a scratch database's only user
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
EnvOf = Callable[[str, str], Mapping[str, str]]  # production_env(database_url, redis_url)


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] dashboard: {message}", flush=True)


def pages(form_id: str, submission_id: str) -> dict[str, tuple[str, str]]:
    """Each timed page by name: its path, and a text it holds when it shows what it
    should (checked once, before the timing)."""
    inbox = f"/dashboard/forms/{form_id}"
    return {
        "forms_list": ("/dashboard", f"{inbox}?status=spam"),
        "inbox": (inbox, "Person "),
        "search_rare": (f"{inbox}?q={RARE}", RARE),
        "search_common": (f"{inbox}?q={COMMON}", "Person "),
        "spam_tab": (f"{inbox}?status=spam", "Person "),
        "submission": (f"/dashboard/submissions/{submission_id}", "given up"),
    }


def sign_in(client: httpx.Client, link: str) -> None:
    """A new owner's first visit: the link's password form, then the password set."""
    path = urlsplit(link).path
    form = client.get(path)
    form.raise_for_status()
    found = CSRF.search(form.text)
    if found is None:
        raise RuntimeError("the sign-in link's page holds no CSRF token")
    data = {"csrf": found.group(1), "password": PASSWORD, "confirm": PASSWORD}
    done = client.post(path, data=data)
    if done.status_code != 303 or "intake_session" not in client.cookies:
        raise RuntimeError(f"setting the password answered {done.status_code}")


def fetch(client: httpx.Client, path: str, expected: str = "") -> float:
    """One page, in milliseconds; anything but a 200 holding `expected` stops the bench."""
    started = time.perf_counter()
    answer = client.get(path)
    elapsed = (time.perf_counter() - started) * 1000
    if answer.status_code != 200:
        raise RuntimeError(f"GET {path} answered {answer.status_code}")
    if expected not in answer.text:
        raise RuntimeError(f"GET {path} answered a page without {expected!r}")
    return elapsed


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return {"p50_ms": round(statistics.median(ordered), 1), "p95_ms": round(p95, 1)}


def timed(
    client: httpx.Client, paths: Mapping[str, tuple[str, str]], rounds: int, each: int
) -> dict[str, Any]:
    """Every page `each` times a round, pages taking turns; the load while it ran."""
    for path, expected in paths.values():  # warm: the worker's pool, caches and plans
        fetch(client, path, expected)
    samples: dict[str, list[float]] = {name: [] for name in paths}
    load_before = machine.describe()["load_average"]
    watch = machine.Watch()
    for round_number in range(1, rounds + 1):
        for name, (path, _) in paths.items():
            samples[name].extend(fetch(client, path) for _ in range(each))
        log(f"round {round_number} of {rounds} done")
    figures: dict[str, Any] = {name: percentiles(found) for name, found in samples.items()}
    figures["machine"] = {
        "load_average_before": load_before,
        "load_average_after": machine.describe()["load_average"],
        "cores_used": watch.finish(),
    }
    return figures


def run(
    admin_url: str, env_of: Callable[[str], Mapping[str, str]], rows: int, workdir: Path,
    *, rounds: int, each: int,
) -> dict[str, Any]:  # fmt: skip
    """`env_of`: the production environment of `intake serve` for a database URL."""
    results: dict[str, Any] = {"rows": rows, "forms": OTHER_FORMS + 1, "samples": rounds * each}
    with ExitStack() as stack:
        database = BenchDatabase(admin_url)
        database.create()
        stack.callback(database.drop)
        install = installed()
        env = install.env({**env_of(database.url), "INTAKE_DASHBOARD_TIMEZONE": ZONE})
        script = install.intake
        target = provision(script, env)
        forms = [target.form_id, *copies(database.url, target.form_id)]
        log(f"seeding {rows:,} submissions in one form, {OTHER_ROWS:,} in {OTHER_FORMS} more")
        started = time.perf_counter()
        shown = seed(database.url, target.workspace_id, forms, rows)
        results["seed_seconds"] = round(time.perf_counter() - started, 1)
        log(f"seeded in {results['seed_seconds']} s")
        owner = intake(
            script, env, "user", "create", "--email", "owner@example.com",
            "--workspace", target.workspace_id, "--role", "owner",
        )  # fmt: skip
        port = free_port()
        argv = [script, "serve", "--workers", "1", "--port", str(port)]
        server = Server("dashboard", argv, env, port, workdir / "dashboard.log")
        stack.callback(server.stop)
        server.wait_ready()
        with httpx.Client(base_url=server.base, timeout=60) as client:
            sign_in(client, str(owner["sign_in_link"]))
            results.update(timed(client, pages(target.form_id, shown), rounds, each))
    return results


def checks(results: Mapping[str, Any]) -> list[tuple[str, float, float, bool]]:
    """(page, p50, p95, met) for each page."""
    found = [(name, results[name]["p50_ms"], results[name]["p95_ms"]) for name in pages("", "")]
    return [(name, p50, p95, p95 < TARGET_MS) for name, p50, p95 in found]


def report(results: Mapping[str, Any]) -> str:
    lines = [
        f"dashboard pages over HTTP, {results['rows']:,} submissions in one form of"
        f" {results['forms']} (PostgreSQL, {results['samples']} requests each):"
    ]
    for name, p50, p95, met in checks(results):
        verdict = "PASS" if met else "FAIL"
        target = f"target p95 < {TARGET_MS:g} ms"
        lines.append(f"  {verdict} {name}: p50 {p50} ms, p95 {p95} ms ({target})")
    seen = results["machine"]
    lines.append(
        f"  load average {seen['load_average_before']} before, {seen['load_average_after']}"
        f" after; other processes used {seen['cores_used']['others']} cores"
    )
    return "\n".join(lines)


def measure(options: Options, env_of: EnvOf, workdir: Path, results: dict[str, Any]) -> None:
    """The figures into results["dashboard"], unless `--dashboard-rows 0`."""
    if options.dashboard_rows > 0:
        results["dashboard"] = run(
            options.postgres,
            lambda url: env_of(url, options.redis),
            options.dashboard_rows,
            workdir,
            rounds=2 if options.quick else 5,
            each=3 if options.quick else 20,
        )


def say_figures(results: Mapping[str, Any], say: Callable[[str], None]) -> bool:
    """Prints the figures, if measured; whether every page met its target."""
    if "dashboard" not in results:
        return True
    say(report(results["dashboard"]))
    say("")
    return all(met for *_, met in checks(results["dashboard"]))


def alone(options: Options, env_of: EnvOf, say: Callable[[str], None]) -> int:
    """`--dashboard-only`: these figures and no other."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="intake-bench-") as temp:
        measure(options, env_of, Path(temp), results)
    options.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if say_figures(results, say) else 1
