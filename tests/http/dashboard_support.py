"""The dashboard mounted on the HTTP harness's service, for the dashboard's tests: its
accounts service, a workspace with a form, and a browser's steps."""

from __future__ import annotations

import re

import httpx2
from starlette.applications import Starlette

from intake.accounts_runtime import make_accounts
from intake.adapters.password_argon2 import Argon2PasswordHasher
from intake.domain.users import Role
from intake.service.accounts import Accounts
from tests.http.conftest import Service

PASSWORD = "correct horse battery"
# Real argon2id, with less work than production's, so that the suite stays fast.
CHEAP_ARGON2 = Argon2PasswordHasher(time_cost=1, memory_cost=1024)
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def isolated(html: str) -> str:
    """A value as the dashboard shows text it did not write (`html` escaped already):
    in a direction isolate of its own."""
    return f'<bdi dir="auto">{html}</bdi>'


class Dashboard:
    """The service with the dashboard mounted, and the accounts service it runs on."""

    def __init__(self, svc: Service) -> None:
        self.svc = svc
        assert isinstance(svc.app, Starlette)
        self.app = svc.app
        runtime = self.app.state.runtime
        self.accounts: Accounts = make_accounts(
            runtime.settings,
            svc.store,
            svc.clock,
            svc.ids,
            runtime.rate_limiter,
            hasher=CHEAP_ARGON2,
        )
        self.app.state.dashboard_accounts = self.accounts
        self.workspace = svc.workspace(name="Acme <b>&</b>")
        self.form = svc.form(self.workspace.workspace_id, name="<script>alert(1)</script>")

    @property
    def client(self) -> httpx2.Client:
        return self.svc.client

    def link(self, email: str = "ada@example.com", role: Role = Role.OWNER) -> str:
        created = self.svc.run(self.accounts.users.create, email, self.workspace.workspace_id, role)
        assert created.link is not None
        return "/" + created.link.split("/", 3)[3]

    def csrf(self, path: str) -> str:
        page = self.client.get(path)
        assert page.status_code == 200
        found = CSRF.search(page.text)
        assert found is not None
        return found.group(1)

    def post(self, path: str, **data: str) -> httpx2.Response:
        """A dashboard form posted with the signed-in session's CSRF token (or `csrf`)."""
        data.setdefault("csrf", self.csrf("/dashboard"))
        return self.client.post(path, data=data)

    def owner_signs_in(self) -> None:
        """A new owner of the workspace, signed in by setting their password."""
        self.set_password(self.link("owner@example.com"))

    def set_password(self, link: str, password: str = PASSWORD) -> httpx2.Response:
        token = self.csrf(link)
        return self.client.post(
            link, data={"csrf": token, "password": password, "confirm": password}
        )

    def sign_in(
        self, email: str, password: str, headers: dict[str, str] | None = None
    ) -> httpx2.Response:
        token = self.csrf("/dashboard/sign-in")
        return self.client.post(
            "/dashboard/sign-in",
            data={"csrf": token, "email": email, "password": password},
            headers=headers,
        )

    def sign_in_to(
        self, page: str, email: str, password: str, next_path: str | None = None
    ) -> httpx2.Response:
        """The sign-in form of `page` (a sign-in address, `next` and all) sent as shown,
        or with `next_path` as its `next` field."""
        shown = self.client.get(page)
        token = CSRF.search(shown.text)
        assert token is not None
        data = {"csrf": token.group(1), "email": email, "password": password}
        found = re.search(r'name="next" value="([^"]*)"', shown.text)
        if found is not None:
            data["next"] = found.group(1).replace("&amp;", "&")
        if next_path is not None:
            data["next"] = next_path
        return self.client.post("/dashboard/sign-in", data=data)

    def said(self, answer: httpx2.Response) -> str:
        """What the page a post led to (303) says the post did, its one-view message."""
        assert answer.status_code == 303, answer.text
        page = self.client.get(answer.headers["location"]).text
        found = re.search(r'<p class="notice" role="status">(.*?)</p>', page)
        assert found is not None, page
        return found.group(1)

    def new_browser(self) -> None:
        self.client.cookies.clear()
