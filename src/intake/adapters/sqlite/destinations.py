"""A form's webhook endpoints, notification recipients and chat destinations over the
SQLite connection: each method sends one function to the worker thread, and an operation
of several statements is one transaction."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from intake.adapters import delivery_records
from intake.adapters import sql_statements as sql
from intake.adapters.sealed_columns import opened_endpoint, sealed_endpoint
from intake.adapters.sqlite import delivery_records as records
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.chat_destinations import SqliteChats
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.destination_caps import insert_capped
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.adapters.sqlite.worker import Worker
from intake.domain.chat import ChatDestination
from intake.domain.deliveries import (
    NotificationRecipient,
    RecipientStatus,
    WebhookEndpoint,
)
from intake.domain.webhook_targets import AlreadyAnEndpoint, same_endpoint_url
from intake.ports.sealer import Sealer

_INSERT_ENDPOINT = sql.INSERT_ENDPOINT
_SELECT_ENDPOINT = sql.SELECT_ENDPOINT
_GET_ENDPOINT = sql.GET_ENDPOINT
_LIST_ENDPOINTS = sql.LIST_ENDPOINTS
_REMOVE_ENDPOINT = sql.REMOVE_ENDPOINT
_DISABLE_ENDPOINT = sql.DISABLE_ENDPOINT
_INSERT_RECIPIENT = sql.INSERT_RECIPIENT
_LIST_RECIPIENTS = sql.LIST_RECIPIENTS
_REMOVE_RECIPIENT = sql.REMOVE_RECIPIENT
_COUNT_ENDPOINTS = sql.COUNT_ENDPOINTS
_COUNT_RECIPIENTS = sql.COUNT_RECIPIENTS


def _add_endpoint(
    conn: sqlite3.Connection, endpoint: WebhookEndpoint, at_most: int | None, sealer: Sealer
) -> None:
    def refuse_a_second(conn: sqlite3.Connection) -> None:
        # Compared as opened, so that a URL kept sealed compares as what it is.
        for kept in _list_endpoints(conn, endpoint.form_id):
            opened = opened_endpoint(kept, sealer)
            if same_endpoint_url(opened.url, endpoint.url):
                raise AlreadyAnEndpoint(f"form {endpoint.form_id} has an endpoint at this URL")

    insert_capped(
        conn,
        _INSERT_ENDPOINT,
        ROW_MAPPER.endpoint_params(sealed_endpoint(endpoint, sealer)),
        count=_COUNT_ENDPOINTS,
        form_id=endpoint.form_id,
        at_most=at_most,
        refuse=refuse_a_second,
    )


def _get_endpoint(
    conn: sqlite3.Connection, endpoint_id: str, workspace_id: str | None
) -> WebhookEndpoint | None:
    if workspace_id is None:
        row = conn.execute(_GET_ENDPOINT, (endpoint_id,)).fetchone()
    else:
        row = conn.execute(sql.GET_ENDPOINT_IN, (endpoint_id, workspace_id)).fetchone()
    return None if row is None else ROW_MAPPER.endpoint_from_row(row)


def _list_endpoints(conn: sqlite3.Connection, form_id: str) -> list[WebhookEndpoint]:
    return [ROW_MAPPER.endpoint_from_row(row) for row in conn.execute(_LIST_ENDPOINTS, (form_id,))]


def _remove(conn: sqlite3.Connection, query: str, item_id: str) -> bool:
    return conn.execute(query, (item_id,)).rowcount > 0


def _recipient_by(
    conn: sqlite3.Connection, query: str, params: tuple[str, ...]
) -> NotificationRecipient | None:
    rows = conn.execute(query, params).fetchall()  # all: an UPDATE ... RETURNING ends
    return ROW_MAPPER.recipient_from_row(rows[0]) if rows else None


def _remove_endpoint(conn: sqlite3.Connection, endpoint_id: str) -> bool:
    with transaction(conn):
        if conn.execute(_REMOVE_ENDPOINT, (endpoint_id,)).rowcount == 0:
            return False
        conn.execute(delivery_records.DROP_UNDELIVERED, (endpoint_id,))
    return True


def _disable_endpoint(conn: sqlite3.Connection, endpoint_id: str, when: datetime) -> None:
    conn.execute(_DISABLE_ENDPOINT, (mapping.time_text(when), endpoint_id))


def _add_recipient(
    conn: sqlite3.Connection, recipient: NotificationRecipient, at_most: int | None
) -> None:
    params = ROW_MAPPER.recipient_params(recipient)
    form_id = recipient.form_id
    if (
        insert_capped(
            conn,
            _INSERT_RECIPIENT,
            params,
            count=_COUNT_RECIPIENTS,
            form_id=form_id,
            at_most=at_most,
        )
        == 0
    ):
        raise ValueError("already a recipient")


def _list_recipients(conn: sqlite3.Connection, form_id: str) -> list[NotificationRecipient]:
    return [
        ROW_MAPPER.recipient_from_row(row) for row in conn.execute(_LIST_RECIPIENTS, (form_id,))
    ]


class SqliteDestinations:
    def __init__(self, worker: Worker, sealer: Sealer) -> None:
        self._worker = worker
        self._sealer = sealer
        self._chats = SqliteChats(worker, sealer)

    async def add_endpoint(self, endpoint: WebhookEndpoint, *, at_most: int | None = None) -> None:
        await self._worker.run(_add_endpoint, endpoint, at_most, self._sealer)

    async def get_endpoint(
        self, endpoint_id: str, *, workspace_id: str | None = None
    ) -> WebhookEndpoint | None:
        endpoint = await self._worker.run(_get_endpoint, endpoint_id, workspace_id)
        return None if endpoint is None else opened_endpoint(endpoint, self._sealer)

    async def list_endpoints(self, form_id: str) -> list[WebhookEndpoint]:
        endpoints = await self._worker.run(_list_endpoints, form_id)
        return [opened_endpoint(endpoint, self._sealer) for endpoint in endpoints]

    async def remove_endpoint(self, endpoint_id: str) -> bool:
        return await self._worker.run(_remove_endpoint, endpoint_id)

    async def disable_endpoint(self, endpoint_id: str, when: datetime) -> None:
        await self._worker.run(_disable_endpoint, endpoint_id, when)

    async def add_recipient(
        self, recipient: NotificationRecipient, *, at_most: int | None = None
    ) -> None:
        """ValueError when the form has a recipient with this address already."""
        await self._worker.run(_add_recipient, recipient, at_most)

    async def get_recipient(
        self, recipient_id: str, *, workspace_id: str | None = None
    ) -> NotificationRecipient | None:
        return await self._worker.run(records.get_recipient, recipient_id, workspace_id)

    async def list_recipients(self, form_id: str) -> list[NotificationRecipient]:
        return await self._worker.run(_list_recipients, form_id)

    async def pending_recipient(self, confirm_hash: str) -> NotificationRecipient | None:
        return await self._worker.run(_recipient_by, sql.FIND_PENDING_RECIPIENT, (confirm_hash,))

    async def answer_recipient(
        self, confirm_hash: str, status: RecipientStatus
    ) -> NotificationRecipient | None:
        answer = (status.value, confirm_hash)
        return await self._worker.run(_recipient_by, sql.ANSWER_RECIPIENT, answer)

    async def remove_recipient(self, recipient_id: str) -> bool:
        return await self._worker.run(_remove, _REMOVE_RECIPIENT, recipient_id)

    async def add_chat(self, destination: ChatDestination, *, at_most: int | None = None) -> None:
        await self._chats.add(destination, at_most)

    async def get_chat(
        self, destination_id: str, *, workspace_id: str | None = None
    ) -> ChatDestination | None:
        return await self._chats.get(destination_id, workspace_id)

    async def list_chats(self, form_id: str) -> list[ChatDestination]:
        return await self._chats.of_form(form_id)

    async def remove_chat(self, destination_id: str) -> bool:
        return await self._chats.remove(destination_id)
