"""A dashboard with plausible content, for the accessibility walk and the screenshots in
docs/dashboard.md: a workspace "Acme Studio" whose "Contact" form has a handful of
messages (one with a file, one marked spam), each accepted one delivered by the real
relay to a local webhook receiver, and an owner signed in through a one-time link.

It has a service and a database of its own, so that no other test's forms (some of them
hostile on purpose) show in its pages.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, StorageState

from tests.browser.conftest import BROWSER_TIMEOUT_MS, LOG_TAIL, Service
from tests.support.processes import clean_env, run_cli
from tests.support.receiver import Receiver
from tests.support.smtp_server import SmtpServer

PASSWORD = "plum orchard lantern 42"
OWNER = "ada@acme.example"
MEMBER = "sam@acme.example"
PUBLIC_HOOK = "https://hooks.acme.example/intake"
RELAY_PASSES = 5  # `intake relay --once` runs; the first normally delivers everything

# What visitors of a small studio's site might send; the last one is triaged as spam.
MESSAGES = [
    {
        "name": "Maria López",
        "email": "maria.lopez@example.org",
        "_replyto": "maria.lopez@example.org",
        "_subject": "Quote for a bakery website",
        "message": "We are planning a new website for our bakery and would love a quote. "
        "Ideally live before the spring season.",
    },
    {
        "name": "James Okafor",
        "email": "j.okafor@example.net",
        "_replyto": "j.okafor@example.net",
        "message": "Is the typography workshop on 12 December still open? Two seats, please.",
    },
    {
        "name": "Tom Becker",
        "email": "tom@becker.example",
        "message": "Your contact page looked broken on my phone yesterday, fine today.",
    },
    {
        "name": "Lena Fischer",
        "email": "lena.fischer@example.com",
        "_replyto": "lena.fischer@example.com",
        "message": "Can we move Thursday's call to 3 pm? Same link as last time.",
    },
]
WITH_FILE = {
    "name": "Priya Raman",
    "email": "priya@raman.example",
    "_replyto": "priya@raman.example",
    "_subject": "Project brief",
    "message": "Please find our project brief attached. Happy to talk next week.",
}
SPAM = {
    "name": "Best SEO",
    "email": "offers@seo-deals.example",
    "message": "Rank first on every search engine in 7 days! Limited offer, reply now.",
}
# A minimal well-formed PDF: the form accepts PDF files, as their content shows them.
BRIEF_PDF = (
    b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
    b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"
)


@dataclass
class Demo:
    service: Service
    workspace_id: str
    form_id: str
    submission_id: str  # the one with a file and a delivered webhook
    spam_id: str
    owner: StorageState  # an owner's signed-in browser state

    def url(self, path: str) -> str:
        return self.service.base + path

    def new_page(
        self,
        browser: Browser,
        width: int,
        height: int,
        *,
        signed_in: bool,
        scheme: Literal["light", "dark"] = "light",
    ) -> Page:
        """A fresh browser context's page, `scheme` the colour scheme the system prefers."""
        context = browser.new_context(
            viewport={"width": width, "height": height},
            storage_state=self.owner if signed_in else None,
            color_scheme=scheme,
        )
        context.set_default_timeout(BROWSER_TIMEOUT_MS)
        return context.new_page()

    def sign_in_link(self, email: str, role: str = "member") -> str:
        """A new user's one-time link, as a path on this service."""
        created = self.service.intake(
            "user", "create", "--email", email, "--workspace", self.workspace_id, "--role", role
        )
        link: str = created["sign_in_link"]
        return urlsplit(link).path


def _submit(service: Service, key: str, fields: dict[str, str], *, file: bool = False) -> str:
    url = f"{service.base}/f/{key}"
    headers = {"Accept": "application/json"}
    if file:
        files = {"brief": ("project-brief.pdf", BRIEF_PDF, "application/pdf")}
        answer = httpx.post(url, data=fields, files=files, headers=headers)
    else:
        answer = httpx.post(url, json=fields, headers=headers)
    assert answer.status_code == 201, answer.text
    submission_id: str = answer.json()["submission_id"]
    return submission_id


def _deliver(service: Service, smtp: SmtpServer, sent: Callable[[], bool]) -> None:
    """Runs the relay, pass by pass (`intake relay --once`), until `sent` says everything
    reached its webhook and mailbox. Only the relay knows the mail server: the service,
    without one, says on its pages that nothing is mailed (invitations, test mails), as
    the accessibility walk wants to see."""
    env = {**service.env, "INTAKE_SMTP_URL": smtp.url, "INTAKE_MAIL_FROM": "intake@acme.example"}
    passes = []
    for _ in range(RELAY_PASSES):
        passes.append(run_cli(env, "relay", "--once"))
        if sent():
            return
    pytest.fail(f"the relay did not deliver the demo's submissions: {passes}")


def _owner_state(browser: Browser, service: Service, link_path: str) -> StorageState:
    context: BrowserContext = browser.new_context()
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(service.base + link_path)
        page.fill("#password", PASSWORD)
        page.fill("#confirm", PASSWORD)
        page.get_by_role("button", name="Set password and sign in").click()
        page.wait_for_url(service.base + "/dashboard")
        return context.storage_state()
    finally:
        context.close()


def _workspace(service: Service) -> str:
    """The workspace with a member and two API keys besides its owner."""
    workspace_id: str = service.intake("workspace", "create", "--name", "Acme Studio")[
        "workspace_id"
    ]
    service.intake("key", "create", "--workspace", workspace_id)
    service.intake("key", "create", "--workspace", workspace_id, "--scope", "read")
    service.intake("user", "create", "--email", MEMBER, "--workspace", workspace_id)
    return workspace_id


@contextmanager
def running_demo(home: Path, browser: Browser) -> Iterator[Demo]:
    with SmtpServer() as smtp, Receiver() as receiver:
        env = clean_env(
            INTAKE_DATABASE_URL=f"sqlite:///{home / 'intake.db'}",
            # The relay may post to the local receiver.
            INTAKE_WEBHOOK_ALLOW_PRIVATE="true",
            # All the demo's visitors come from 127.0.0.1 within a second.
            INTAKE_RATE_LIMIT_PUBLIC_BURST="100/30",
        )
        service = Service(env, home / "serve.log", stop_signal=signal.SIGINT, log_tail=LOG_TAIL)
        # Links in pages (invitations) name the address the browser uses.
        service.env["INTAKE_BASE_URL"] = service.base
        with service:
            yield _fill(service, receiver, smtp, browser)


def _fill(service: Service, receiver: Receiver, smtp: SmtpServer, browser: Browser) -> Demo:
    workspace_id = _workspace(service)
    form = service.create_form(
        workspace_id, "--name", "Contact", "--upload-type", "application/pdf"
    )
    form_id = form["form_id"]
    service.create_form(workspace_id, "--name", "Newsletter sign-up")
    local = service.intake("webhook", "add", "--form", form_id, "--url", receiver.url())
    service.intake("notify", "add", "--form", form_id, "--email", "team@acme.example")
    key = form["public_form_key"]
    for fields in MESSAGES:
        _submit(service, key, fields)
    with_file = _submit(service, key, WITH_FILE, file=True)
    spam = _submit(service, key, SPAM)
    service.intake("submissions", "mark-spam", spam)
    # Every accepted one is delivered (the spam one may have been sent before it was marked).
    accepted = len(MESSAGES) + 1
    _deliver(
        service,
        smtp,
        lambda: len(receiver.requests) >= accepted and len(smtp.messages) >= accepted,
    )
    # What the pages show from now on is a site's own endpoint, not the test's receiver.
    service.intake("webhook", "remove", local["endpoint_id"])
    service.intake("webhook", "add", "--form", form_id, "--url", PUBLIC_HOOK)
    link = urlsplit(
        service.intake("user", "create", "--email", OWNER, "--workspace", workspace_id,
                       "--role", "owner")["sign_in_link"]
    ).path  # fmt: skip
    return Demo(
        service=service,
        workspace_id=workspace_id,
        form_id=form_id,
        submission_id=with_file,
        spam_id=spam,
        owner=_owner_state(browser, service, link),
    )
