"""Headless Chromium against a real `intake serve`, with the pages of docs/snippets served
from another origin.

Debian's Chromium is driven through Playwright; no browser is ever downloaded. One
service (SQLite in a temporary directory), one static site and one browser serve the
whole package; every test makes forms of its own and a fresh browser context. They keep
the package scope: Playwright's sync API holds an asyncio loop in the thread while it
runs, where the other packages' tests run their own, and a service kept for the whole
test process would count every package visit's sign-ins against one rate limit. The
static site alone, which holds nothing, lasts the test process.

Origins: the service is http://127.0.0.1:P1; the site is http://localhost:P2 (the
origin forms allow) and the same server reached as http://127.0.0.1:P2 is a third,
foreign origin.
"""

from __future__ import annotations

import json
import os
import signal
import zlib
from collections.abc import Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, Request, Response, sync_playwright

from intake.domain.model import ChallengeProvider
from tests.conftest import new_postgres_database, unavailable
from tests.support.fake_provider import FakeProvider
from tests.support.local_server import LocalHttpServer, QuietServer
from tests.support.processes import ServedProcess, clean_env, run_cli

# Debian's package; INTAKE_TEST_CHROMIUM names another build of the same browser.
CHROMIUM = os.environ.get("INTAKE_TEST_CHROMIUM") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SNIPPETS = Path(__file__).resolve().parents[2] / "docs" / "snippets"
# What the snippets say where an operator puts their own values.
SNIPPET_BASE = "https://intake.example.com"
SNIPPET_KEY = "YOUR_FORM_KEY"

LOG_TAIL = 40  # lines of the service's log attached to a failure
BROWSER_TIMEOUT_MS = 10_000  # for any one browser action or wait
VIEWPORT_WIDTH, VIEWPORT_HEIGHT = 800, 600


def snippet(name: str, **values: str) -> str:
    """A page of docs/snippets with its placeholders filled: `base` (the service's
    address) and `key` (the public form key). Every placeholder must be there, so that
    the docs cannot drift from what the tests run."""
    text = (SNIPPETS / name).read_text(encoding="utf-8")
    replacements = {SNIPPET_BASE: values.pop("base"), SNIPPET_KEY: values.pop("key")}
    assert not values, f"unknown placeholders {sorted(values)}"
    for placeholder, value in replacements.items():
        assert placeholder in text, f"{name} lost its placeholder {placeholder}"
        text = text.replace(placeholder, value)
    return text


# -- the static site on another origin -----------------------------------------------


class Site(LocalHttpServer):
    """Serves pages put into it by path, and records which paths were fetched."""

    thread_name = "static-site"

    def __init__(self) -> None:
        super().__init__()
        self._pages: dict[str, str] = {}
        self._fetched: list[str] = []

    @property
    def origin(self) -> str:
        """The site's own origin, the one forms allow."""
        return f"http://localhost:{self.port}"

    @property
    def foreign_origin(self) -> str:
        """The same server under another host name: a different origin to a browser."""
        return f"http://127.0.0.1:{self.port}"

    def put(self, path: str, html: str) -> str:
        """Serves `html` at `path`; returns its URL on the site's own origin."""
        with self._lock:
            self._pages[path] = html
        return self.origin + path

    def page(self, path: str) -> str | None:
        with self._lock:
            return self._pages.get(path)

    @property
    def fetched(self) -> list[str]:
        with self._lock:
            return list(self._fetched)

    def _record(self, path: str) -> None:
        with self._lock:
            self._fetched.append(path)


class _SiteServer(QuietServer):
    owner: Site


class _SiteHandler(BaseHTTPRequestHandler):
    server: _SiteServer
    timeout = 5.0

    def do_GET(self) -> None:
        site = self.server.owner
        path = self.path.split("?", 1)[0]
        site._record(self.path)
        html = site.page(path)
        if html is None:
            self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")
        else:
            self._send(HTTPStatus.OK, html.encode("utf-8"), "text/html; charset=utf-8")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: the default writes every request to stderr


Site.handler = _SiteHandler
Site.server_class = _SiteServer


# -- the service ----------------------------------------------------------------------


class Service(ServedProcess):
    """One `intake serve` process and the `intake` command line on its database."""

    def log_lines(self) -> list[dict[str, Any]]:
        """The service's JSON log lines (anything else it printed is left out)."""
        lines = []
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                lines.append(record)
        return lines

    def intake(self, *argv: str) -> dict[str, Any]:
        return run_cli(self.env, *argv)

    def create_form(self, workspace_id: str, *options: str) -> dict[str, Any]:
        return self.intake("form", "create", "--workspace", workspace_id, *options)

    def submissions(self, form_id: str) -> list[dict[str, Any]]:
        listed = self.intake("submissions", "list", "--form", form_id)["submissions"]
        assert isinstance(listed, list)
        return listed


@pytest.fixture(scope="package")
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as fake:
        yield fake


@pytest.fixture(scope="package")
def service(tmp_path_factory: pytest.TempPathFactory, provider: FakeProvider) -> Iterator[Service]:
    home = tmp_path_factory.mktemp("intake")
    env = clean_env(
        INTAKE_DATABASE_URL=f"sqlite:///{home / 'intake.db'}",
        INTAKE_TURNSTILE_VERIFY_URL=provider.url(ChallengeProvider.TURNSTILE),
    )
    # Stopped with SIGINT, as Ctrl-C would: the service must then exit with 0.
    running = Service(env, home / "serve.log", stop_signal=signal.SIGINT, log_tail=LOG_TAIL)
    with running:
        yield running
    assert running.returncode == 0, running.tail()


@pytest.fixture(scope="package")
def postgres_service(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Service]:
    """`intake serve` as production runs it: PostgreSQL (a database of its own) and the
    test Redis, for the walks that run on both."""
    home = tmp_path_factory.mktemp("intake-pg")
    with new_postgres_database(migrated=True) as database_url:
        env = clean_env(
            INTAKE_DATABASE_URL=database_url,
            INTAKE_REDIS_URL=redis_url,
            # Files need a blob store of their own beside PostgreSQL (uploads.md).
            INTAKE_BLOB_URL=(home / "blobs").as_uri(),
        )
        running = Service(env, home / "serve.log", stop_signal=signal.SIGINT, log_tail=LOG_TAIL)
        with running:
            yield running
        assert running.returncode == 0, running.tail()


@pytest.fixture(scope="package")
def workspace_id(service: Service) -> str:
    created = service.intake("workspace", "create", "--name", "Browsers", "--plan", "starter")
    workspace: str = created["workspace_id"]
    return workspace


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    with Site() as running:
        yield running


@pytest.fixture(scope="session")
def chromium() -> str:
    if not os.access(CHROMIUM, os.X_OK):
        unavailable(f"Chromium is not installed at {CHROMIUM} (make browser installs it)")
    return CHROMIUM


# Package scope, not session: Playwright's sync API holds an asyncio loop in the test
# process's thread while it runs, and the other packages' tests run their own there.
@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    driver = sync_playwright().start()
    try:
        yield driver
    finally:
        driver.stop()


@pytest.fixture(scope="package")
def browser(chromium: str, playwright: Playwright) -> Iterator[Browser]:
    # Playwright gives the browser a fresh temporary profile and removes it on close.
    launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT})
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


# -- screenshots ----------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_real_png(path: Path, size: tuple[int, int] = (VIEWPORT_WIDTH, VIEWPORT_HEIGHT)) -> None:
    """A well-formed PNG of `size` (the viewport's, unless told) that shows something: its
    decoded pixels take many values, where a blank or failed render would be one colour."""
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE), f"{path} is not a PNG"
    chunks: dict[bytes, list[bytes]] = {}
    position = len(PNG_SIGNATURE)
    while position < len(data):
        length = int.from_bytes(data[position : position + 4], "big")
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        crc = int.from_bytes(data[position + 8 + length : position + 12 + length], "big")
        assert zlib.crc32(kind + body) == crc, f"{path}: bad CRC in {kind!r}"
        chunks.setdefault(kind, []).append(body)
        position += 12 + length
    assert b"IEND" in chunks, f"{path} is truncated"
    header = chunks[b"IHDR"][0]
    found = (int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big"))
    assert found == size, f"{path}: {found}"
    pixels = zlib.decompress(b"".join(chunks[b"IDAT"]))
    assert len(set(pixels)) > 16, f"{path} looks blank"


# -- submitting a page's form ----------------------------------------------------------


def click_send(page: Page) -> Response:
    """Clicks Send; the page's final answer, after any redirect."""
    with page.expect_navigation() as landing:
        page.click("button[type=submit]")
    response = landing.value
    assert response is not None
    return response


def posted_request(response: Response) -> Request:
    """The POST that a landing page was the redirect of."""
    posted = response.request.redirected_from
    assert posted is not None, f"{response.url} was not reached by a redirect"
    assert posted.method == "POST"
    return posted
