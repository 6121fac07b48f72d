"""A form's webhook endpoints, notification recipients and chat destinations over the pool."""

from __future__ import annotations

from datetime import datetime

from intake.adapters import delivery_records
from intake.adapters import sql_statements as sql
from intake.adapters.postgres import mapping
from intake.adapters.postgres.chat_destinations import PostgresChats
from intake.adapters.postgres.database import Connection, Database
from intake.adapters.postgres.delivery_records import (
    PostgresDeliveryRecords,
)
from intake.adapters.postgres.destination_caps import insert_capped
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.sealed_columns import opened_endpoint, sealed_endpoint
from intake.adapters.sql_rows import Row
from intake.adapters.sql_statements import for_psycopg
from intake.domain.chat import ChatDestination
from intake.domain.deliveries import (
    NotificationRecipient,
    RecipientStatus,
    WebhookEndpoint,
)
from intake.domain.webhook_targets import AlreadyAnEndpoint, same_endpoint_url
from intake.ports.sealer import Sealer

_INSERT_ENDPOINT = for_psycopg(sql.INSERT_ENDPOINT)
_SELECT_ENDPOINT = for_psycopg(sql.SELECT_ENDPOINT)
_GET_ENDPOINT = for_psycopg(sql.GET_ENDPOINT)
_GET_ENDPOINT_IN = for_psycopg(sql.GET_ENDPOINT_IN)
_LIST_ENDPOINTS = for_psycopg(sql.LIST_ENDPOINTS)
_DISABLE_ENDPOINT = for_psycopg(sql.DISABLE_ENDPOINT)
_INSERT_RECIPIENT = for_psycopg(sql.INSERT_RECIPIENT)
_SELECT_RECIPIENT = for_psycopg(sql.SELECT_RECIPIENT)
_LIST_RECIPIENTS = for_psycopg(sql.LIST_RECIPIENTS)
_GET_RECIPIENT = for_psycopg(delivery_records.GET_RECIPIENT)
_GET_RECIPIENT_IN = for_psycopg(delivery_records.GET_RECIPIENT_IN)
_REMOVE_RECIPIENT = for_psycopg(sql.REMOVE_RECIPIENT)
_FIND_PENDING_RECIPIENT = for_psycopg(sql.FIND_PENDING_RECIPIENT)
_ANSWER_RECIPIENT = for_psycopg(sql.ANSWER_RECIPIENT)
_COUNT_ENDPOINTS = for_psycopg(sql.COUNT_ENDPOINTS)
_COUNT_RECIPIENTS = for_psycopg(sql.COUNT_RECIPIENTS)


class PostgresDestinations:
    def __init__(self, db: Database, sealer: Sealer) -> None:
        self._db = db
        self._sealer = sealer
        self._records = PostgresDeliveryRecords(db)
        self._chats = PostgresChats(db, sealer)

    async def add_endpoint(self, endpoint: WebhookEndpoint, *, at_most: int | None = None) -> None:
        params = ROW_MAPPER.endpoint_params(sealed_endpoint(endpoint, self._sealer))
        form_id = endpoint.form_id

        async def refuse_a_second(conn: Connection) -> None:
            # Under the form's lock; compared as opened, so a sealed URL compares too.
            cursor = await conn.execute(_LIST_ENDPOINTS, (form_id,))
            for row in await cursor.fetchall():
                if same_endpoint_url(self._opened(row).url, endpoint.url):
                    raise AlreadyAnEndpoint(f"form {form_id} has an endpoint at this URL")

        await insert_capped(
            self._db,
            _INSERT_ENDPOINT,
            params,
            count=_COUNT_ENDPOINTS,
            form_id=form_id,
            at_most=at_most,
            refuse=refuse_a_second,
        )

    async def get_endpoint(
        self, endpoint_id: str, *, workspace_id: str | None = None
    ) -> WebhookEndpoint | None:
        if workspace_id is None:
            row = await self._db.fetch_one(_GET_ENDPOINT, (endpoint_id,))
        else:
            row = await self._db.fetch_one(_GET_ENDPOINT_IN, (endpoint_id, workspace_id))
        return None if row is None else self._opened(row)

    async def list_endpoints(self, form_id: str) -> list[WebhookEndpoint]:
        rows = await self._db.fetch_all(_LIST_ENDPOINTS, (form_id,))
        return [self._opened(row) for row in rows]

    def _opened(self, row: Row) -> WebhookEndpoint:
        return opened_endpoint(ROW_MAPPER.endpoint_from_row(row), self._sealer)

    async def remove_endpoint(self, endpoint_id: str) -> bool:
        return await self._records.remove_endpoint(endpoint_id)

    async def disable_endpoint(self, endpoint_id: str, when: datetime) -> None:
        await self._db.execute(_DISABLE_ENDPOINT, (mapping.moment(when), endpoint_id))

    async def add_recipient(
        self, recipient: NotificationRecipient, *, at_most: int | None = None
    ) -> None:
        """ValueError when the form has a recipient with this address already."""
        params = ROW_MAPPER.recipient_params(recipient)
        count, form_id = _COUNT_RECIPIENTS, recipient.form_id
        if (
            await insert_capped(
                self._db, _INSERT_RECIPIENT, params, count=count, form_id=form_id, at_most=at_most
            )
            == 0
        ):
            raise ValueError("already a recipient")

    async def get_recipient(
        self, recipient_id: str, *, workspace_id: str | None = None
    ) -> NotificationRecipient | None:
        if workspace_id is None:
            row = await self._db.fetch_one(_GET_RECIPIENT, (recipient_id,))
        else:
            row = await self._db.fetch_one(_GET_RECIPIENT_IN, (recipient_id, workspace_id))
        return None if row is None else ROW_MAPPER.recipient_from_row(row)

    async def list_recipients(self, form_id: str) -> list[NotificationRecipient]:
        rows = await self._db.fetch_all(_LIST_RECIPIENTS, (form_id,))
        return [ROW_MAPPER.recipient_from_row(row) for row in rows]

    async def pending_recipient(self, confirm_hash: str) -> NotificationRecipient | None:
        row = await self._db.fetch_one(_FIND_PENDING_RECIPIENT, (confirm_hash,))
        return None if row is None else ROW_MAPPER.recipient_from_row(row)

    async def answer_recipient(
        self, confirm_hash: str, status: RecipientStatus
    ) -> NotificationRecipient | None:
        row = await self._db.fetch_one(_ANSWER_RECIPIENT, (status.value, confirm_hash))
        return None if row is None else ROW_MAPPER.recipient_from_row(row)

    async def remove_recipient(self, recipient_id: str) -> bool:
        return await self._db.execute(_REMOVE_RECIPIENT, (recipient_id,)) > 0

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
