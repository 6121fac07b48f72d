"""A form's webhook endpoints, notification recipients and chat destinations; an
operation of several statements is one transaction."""

from __future__ import annotations

from datetime import datetime

from intake.adapters import delivery_records
from intake.adapters import sql_statements as sql
from intake.adapters.sealed_columns import opened_endpoint, sealed_endpoint
from intake.adapters.sql.chat_destinations import SqlChats, removed
from intake.adapters.sql.destination_caps import insert_capped
from intake.adapters.sql.executor import Executor, Transaction
from intake.adapters.sql_rows import Row
from intake.domain.chat import ChatDestination
from intake.domain.deliveries import NotificationRecipient, RecipientStatus, WebhookEndpoint
from intake.domain.webhook_targets import AlreadyAnEndpoint, same_endpoint_url
from intake.ports.sealer import Sealer


class SqlDestinations:
    def __init__(self, ex: Executor, sealer: Sealer) -> None:
        self._ex = ex
        self._sealer = sealer
        self._chats = SqlChats(ex, sealer)

    async def add_endpoint(self, endpoint: WebhookEndpoint, *, at_most: int | None = None) -> None:
        params = self._ex.rows.endpoint_params(sealed_endpoint(endpoint, self._sealer))
        form_id = endpoint.form_id

        async def refuse_a_second(tx: Transaction) -> None:
            # In the add's transaction; compared as opened, so a sealed URL compares too.
            for row in await tx.fetch_all(sql.LIST_ENDPOINTS, (form_id,)):
                if same_endpoint_url(self._opened(row).url, endpoint.url):
                    raise AlreadyAnEndpoint(f"form {form_id} has an endpoint at this URL")

        await insert_capped(
            self._ex,
            sql.INSERT_ENDPOINT,
            params,
            count=sql.COUNT_ENDPOINTS,
            form_id=form_id,
            at_most=at_most,
            refuse=refuse_a_second,
        )

    async def get_endpoint(
        self, endpoint_id: str, *, workspace_id: str | None = None
    ) -> WebhookEndpoint | None:
        if workspace_id is None:
            row = await self._ex.fetch_one(sql.GET_ENDPOINT, (endpoint_id,))
        else:
            row = await self._ex.fetch_one(sql.GET_ENDPOINT_IN, (endpoint_id, workspace_id))
        return None if row is None else self._opened(row)

    async def list_endpoints(self, form_id: str) -> list[WebhookEndpoint]:
        rows = await self._ex.fetch_all(sql.LIST_ENDPOINTS, (form_id,))
        return [self._opened(row) for row in rows]

    def _opened(self, row: Row) -> WebhookEndpoint:
        return opened_endpoint(self._ex.rows.endpoint_from_row(row), self._sealer)

    async def remove_endpoint(self, endpoint_id: str) -> bool:
        """The endpoint and its undelivered deliveries, in one transaction."""
        drop = delivery_records.DROP_UNDELIVERED
        return await self._ex.transaction(removed, sql.REMOVE_ENDPOINT, drop, endpoint_id)

    async def disable_endpoint(self, endpoint_id: str, when: datetime) -> None:
        await self._ex.execute(sql.DISABLE_ENDPOINT, (self._ex.rows.codec.time(when), endpoint_id))

    async def add_recipient(
        self, recipient: NotificationRecipient, *, at_most: int | None = None
    ) -> None:
        """ValueError when the form has a recipient with this address already."""
        params = self._ex.rows.recipient_params(recipient)
        count, form_id = sql.COUNT_RECIPIENTS, recipient.form_id
        inserted = await insert_capped(
            self._ex, sql.INSERT_RECIPIENT, params, count=count, form_id=form_id, at_most=at_most
        )
        if inserted == 0:
            raise ValueError("already a recipient")

    async def get_recipient(
        self, recipient_id: str, *, workspace_id: str | None = None
    ) -> NotificationRecipient | None:
        if workspace_id is None:
            return await self._recipient_by(delivery_records.GET_RECIPIENT, (recipient_id,))
        in_workspace = (recipient_id, workspace_id)
        return await self._recipient_by(delivery_records.GET_RECIPIENT_IN, in_workspace)

    async def list_recipients(self, form_id: str) -> list[NotificationRecipient]:
        rows = await self._ex.fetch_all(sql.LIST_RECIPIENTS, (form_id,))
        return [self._ex.rows.recipient_from_row(row) for row in rows]

    async def pending_recipient(self, confirm_hash: str) -> NotificationRecipient | None:
        return await self._recipient_by(sql.FIND_PENDING_RECIPIENT, (confirm_hash,))

    async def answer_recipient(
        self, confirm_hash: str, status: RecipientStatus
    ) -> NotificationRecipient | None:
        return await self._recipient_by(sql.ANSWER_RECIPIENT, (status.value, confirm_hash))

    async def _recipient_by(
        self, query: str, params: tuple[str, ...]
    ) -> NotificationRecipient | None:
        # Every row read: SQLite ends an UPDATE ... RETURNING only once it is read out.
        rows = await self._ex.fetch_all(query, params)
        return self._ex.rows.recipient_from_row(rows[0]) if rows else None

    async def remove_recipient(self, recipient_id: str) -> bool:
        return await self._ex.execute(sql.REMOVE_RECIPIENT, (recipient_id,)) > 0

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
