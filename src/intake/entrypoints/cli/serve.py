"""`intake serve`: run the HTTP service under uvicorn."""

from __future__ import annotations

import argparse
import importlib
import logging

from intake.config import Settings
from intake.config.variables import HOST, PORT, WORKERS
from intake.entrypoints.cli.listener import listen, run_server
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command, port_number, positive_int
from intake.entrypoints.cli.runner import CommandError, log_level, log_what_it_uses
from intake.entrypoints.cli.startup import prepare
from intake.logs import logging_config
from intake.metrics import multiprocess_directory

log = logging.getLogger("intake.cli")

APP_FACTORY = "intake.entrypoints.http.app:served_app"
# uvicorn's protocols with deadlines for slow headers and refused bodies, and a head
# limit (protocol_rules.py), by INTAKE_HTTP_PROTOCOL.
HTTP_PROTOCOLS = {
    "httptools": "intake.entrypoints.http.httptools_protocol:IntakeHttpToolsProtocol",
    "h11": "intake.entrypoints.http.protocol:IntakeH11Protocol",
}


def event_loop() -> str:
    """uvloop where it is installed (a dependency wherever it builds: not on Windows),
    asyncio otherwise. Named, not uvicorn's "auto", which would also take uvloop but
    says nothing of it: the loop is chosen here, the same for the tests and production."""
    try:
        importlib.import_module("uvloop")
    except ImportError:
        return "asyncio"
    return "uvloop"


def register(commands: Subparsers) -> None:
    serve = add_command(
        commands, "serve", help="run the HTTP service (INTAKE_HOST, INTAKE_PORT)", handler=_serve
    )
    serve.add_argument(
        "--host", help=f"address to listen on (default: {HOST.name}, {HOST.default_text()})"
    )
    serve.add_argument(
        "--port",
        type=port_number,
        help=f"port to listen on (default: {PORT.name}, {PORT.default_text()})",
    )
    serve.add_argument(
        "--workers",
        type=positive_int,
        help=f"worker processes (default: {WORKERS.name}, {WORKERS.default_text()})",
    )


def base_url(host: str, port: int) -> str:
    """The address a local client reaches the server on: a wildcard listen address is
    reached through loopback, and an IPv6 literal takes brackets."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)  # noqa: S104
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _shared_rate_limits(settings: Settings) -> bool:
    # Only Redis holds the windows outside one process; the in-process limiter would
    # give every worker its own count, multiplying each limit by the worker count.
    return settings.redis_url is not None


def _serve(args: argparse.Namespace, settings: Settings, out: Output) -> None:
    host = args.host if args.host is not None else settings.host
    port = args.port if args.port is not None else settings.port
    workers = args.workers if args.workers is not None else settings.workers
    if workers > 1 and not _shared_rate_limits(settings):
        raise CommandError(
            f"--workers {workers} needs INTAKE_REDIS_URL: the in-process rate limiter "
            "cannot hold the limits across processes; set INTAKE_REDIS_URL or run one worker"
        )
    level = log_level(settings)
    log_what_it_uses(settings, rate_limits=True)
    # Opened once before any worker starts: a bad database URL is reported here,
    # plainly, and the schema is brought up to date once rather than by every worker at
    # the same moment.
    prepare(settings)
    # Bound first: a port in use is refused here, in one line.
    listener = listen(host, port)
    url = base_url(host, port)

    def serving() -> None:
        # Said once every worker accepts: a client that reads it is answered at once.
        out.result(
            {"url": url, "host": host, "port": port, "workers": workers},
            [f"intake serving on {url} ({workers} worker{'s' if workers > 1 else ''})"],
        )

    # Several workers share their metrics through files (PROMETHEUS_MULTIPROC_DIR), set
    # up before any worker starts, as prometheus-client wants.
    with multiprocess_directory(workers):
        run_server(
            listener,
            APP_FACTORY,
            on_ready=serving,
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level=level,
            log_config=logging_config(level),
            access_log=False,  # submissions carry personal data; the app logs what it needs
            # No WebSocket routes: uvicorn's WebSocket handshake log names the client's
            # address and the raw path, which the app's own log leaves out.
            ws="none",
            http=HTTP_PROTOCOLS[settings.http_protocol],
            loop=event_loop(),
            server_header=False,
            # The app finds the client address itself (INTAKE_TRUSTED_PROXIES); uvicorn
            # must not rewrite it from headers a client can set.
            proxy_headers=False,
            forwarded_allow_ips=[],
        )
