"""docs/snippets/upload-form.html in Chromium: a plain multipart form with a file input,
a real PDF chosen and sent by the browser, the page it lands on, the stored file, and the
download of its link from the service."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import anyio
import httpx
import pytest
from playwright.sync_api import Page

from intake.config import Settings
from intake.domain.model import Form
from intake.library_runtime import Runtime, open_runtime
from intake.presentation.views import submission_view
from intake.service.admin import UploadChanges
from tests.browser.conftest import Service, Site, click_send, posted_request, snippet

pytestmark = [pytest.mark.browser, pytest.mark.slow]

THANKS_TITLE = "Thank you"
FILE_NAME = "CV Zoë 2026.pdf"

T = TypeVar("T")


def _pdf() -> bytes:
    """A small, well-formed one-page PDF, its cross-reference offsets computed."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>",
    ]
    text = b"BT /F1 12 Tf 20 50 Td (Curriculum vitae) Tj ET"
    objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(objects) + 1)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def _open(page: Page, site: Site, service: Service, key: str, path: str) -> None:
    page.goto(site.put(path, snippet("upload-form.html", base=service.base, key=key)))


def _in_service(service: Service, use: Callable[[Runtime], Awaitable[T]]) -> T:
    """Runs `use` on a runtime of the service's own database, in this process: what the
    command line does, without a second of start-up for each command. Its links are
    made for the service's address, as an operator's INTAKE_BASE_URL makes them."""
    settings = Settings.from_env({**service.env, "INTAKE_BASE_URL": service.base})

    async def run() -> T:
        async with open_runtime(settings) as runtime:
            return await use(runtime)

    # Playwright's synchronous API keeps an event loop running in this thread.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, run).result()


def _form_with_uploads(service: Service, workspace_id: str, name: str) -> Form:
    async def create(runtime: Runtime) -> Form:
        return await runtime.services.forms.create(
            workspace_id, name=name, uploads=UploadChanges(enabled=True)
        )

    return _in_service(service, create)


def _stored(service: Service, form_id: str) -> list[dict[str, Any]]:
    """The form's submissions as `intake submissions list` shows them."""

    async def listing(runtime: Runtime) -> list[dict[str, Any]]:
        services = runtime.services
        return [
            submission_view(s, services.submissions.files_view(s))
            async for s in services.exports.submissions(form_id)
        ]

    return _in_service(service, listing)


def test_a_file_chosen_in_the_browser_is_stored_and_its_link_downloads_it(
    page: Page, site: Site, service: Service, workspace_id: str, tmp_path: Path
) -> None:
    content = _pdf()
    chosen = tmp_path / FILE_NAME
    chosen.write_bytes(content)
    form = _form_with_uploads(service, workspace_id, "Applications")
    key = form.public_form_key
    _open(page, site, service, key, "/apply.html")
    page.fill("input[name=name]", "Zoë")
    page.fill("input[name=email]", "zoe@example.com")
    page.set_input_files("input[name=cv]", chosen)

    response = click_send(page)

    posted = posted_request(response)
    assert posted.url == f"{service.base}/f/{key}"
    assert posted.all_headers()["content-type"].startswith("multipart/form-data; boundary=")
    assert page.url == f"{service.base}/f/{key}/thanks"
    assert response.status == 200
    assert page.inner_text("h1") == THANKS_TITLE
    (stored,) = _stored(service, form.form_id)
    assert stored["status"] == "accepted"
    assert stored["data"] == {"name": "Zoë", "email": "zoe@example.com"}
    (entry,) = stored["files"]
    digest = hashlib.sha256(content).hexdigest()
    assert {k: entry[k] for k in ("field", "name", "size", "type", "sha256")} == {
        "field": "cv",
        "name": FILE_NAME,
        "size": len(content),
        "type": "application/pdf",
        "sha256": digest,
    }
    assert urlsplit(entry["url"]).path == f"/v1/files/{stored['submission_id']}/0"
    download = httpx.get(entry["url"], timeout=10.0)
    assert download.status_code == 200, download.text
    assert download.content == content
    assert download.headers["content-type"] == "application/pdf"
    assert download.headers["content-disposition"].startswith("attachment;")
    assert "Zoë" not in service.log.read_text(encoding="utf-8"), "a submission reached the log"


def test_an_optional_file_input_left_empty_sends_no_file(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    form = _form_with_uploads(service, workspace_id, "Optional file")
    key = form.public_form_key
    _open(page, site, service, key, "/apply-without-file.html")
    page.fill("input[name=name]", "Ada")
    page.fill("input[name=email]", "ada@example.com")

    response = click_send(page)

    posted = posted_request(response)
    # The browser does send the empty input: a part with no file name and no bytes.
    body = posted.post_data_buffer
    assert body is not None
    assert b'name="cv"; filename=""' in body
    assert page.url == f"{service.base}/f/{key}/thanks"
    assert page.inner_text("h1") == THANKS_TITLE
    (stored,) = _stored(service, form.form_id)
    assert stored["data"] == {"name": "Ada", "email": "ada@example.com"}
    assert stored["files"] == []
