"""Another workspace's webhook endpoint, mail recipient or chat destination is answered
exactly as an unknown id is: the same 404, from the same work. The store is asked once,
for the id within the key's workspace, so a foreign id cannot be told from a missing one
by the statements it costs (a second lookup, of the destination's form, took about
0.3 ms more). Held on SQLite, whose statements can be traced one by one."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from intake.adapters.sqlite.store import SqliteStore
from intake.domain.chat import ChatApp, ChatDestination
from intake.domain.model import Scope
from tests.http.conftest import BACKENDS, MANAGEMENT_ERRORS, Backend, Seeded, assert_error


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS["sqlite"](request)


ROUTES = [
    ("DELETE", "/v1/webhooks/{}", "endpoint"),
    ("POST", "/v1/webhooks/{}/test", "endpoint"),
    ("GET", "/v1/webhooks/{}/deliveries", "endpoint"),
    ("DELETE", "/v1/notifications/{}", "recipient"),
    ("POST", "/v1/notifications/{}/test", "recipient"),
    ("DELETE", "/v1/destinations/{}", "chat"),
    ("POST", "/v1/destinations/{}/test", "chat"),
]


class Probe:
    """A manage key of one workspace, and another workspace's three destinations."""

    def __init__(self, seeded: Seeded) -> None:
        svc = self.svc = seeded.svc
        key = svc.run(
            svc.services.keys.create,
            seeded.workspace.workspace_id,
            scopes=frozenset({Scope.MANAGE}),
        )
        self.headers = {"authorization": f"Bearer {key.secret}"}
        other = svc.workspace(name="Other")
        form = svc.form(other.workspace_id, name="Theirs")
        endpoint = svc.run(svc.services.webhooks.add, form.form_id, "https://hooks.example.com/in")
        recipient = svc.run(svc.services.recipients.add, form.form_id, "them@example.com")
        chat = ChatDestination("chat_0123456789abcdef", form.form_id, ChatApp.SLACK, "x")
        svc.run(svc.store.destinations.add_chat, chat)
        self.foreign = {
            "endpoint": endpoint.endpoint.endpoint_id,
            "recipient": recipient.recipient_id,
            "chat": chat.destination_id,
        }
        store = svc.store.inner
        assert isinstance(store, SqliteStore)
        self._store = store

    def statements(self, method: str, path: str) -> list[str]:
        """What the store ran to answer the request, each id of the path spelt `{id}`."""
        ran: list[str] = []
        self.svc.run(self._store._worker.run, _traced(ran.append))
        try:
            answer = self.svc.client.request(method, path, headers=self.headers)
        finally:
            self.svc.run(self._store._worker.run, _traced(None))
        assert_error(answer, "not_found", words=MANAGEMENT_ERRORS)
        item_id = path.split("/")[3]
        return [statement.replace(item_id, "{id}") for statement in ran]


def _traced(callback: Callable[[str], object] | None) -> Callable[[sqlite3.Connection], None]:
    def trace(conn: sqlite3.Connection) -> None:
        conn.set_trace_callback(callback)

    return trace


def _missing(item_id: str) -> str:
    """An id of the same shape and length that no destination has."""
    prefix, _, rest = item_id.partition("_")
    return f"{prefix}_{'z' * len(rest)}"


@pytest.mark.parametrize(("method", "template", "kind"), ROUTES)
def test_a_foreign_id_costs_what_a_missing_one_does(
    seeded: Seeded, method: str, template: str, kind: str
) -> None:
    probe = Probe(seeded)
    foreign = probe.foreign[kind]

    for_foreign = probe.statements(method, template.format(foreign))
    for_missing = probe.statements(method, template.format(_missing(foreign)))

    assert for_foreign == for_missing
    assert len(for_foreign) >= 1
