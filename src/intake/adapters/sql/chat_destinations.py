"""A form's chat destinations, their secret sealed as it is written and opened as it is
read (sealed_columns.py)."""

from __future__ import annotations

from intake.adapters import chat_statements as chat_sql
from intake.adapters.sealed_columns import opened_chat, sealed_chat
from intake.adapters.sql.destination_caps import insert_capped
from intake.adapters.sql.executor import Executor, Transaction
from intake.adapters.sql_rows import Row
from intake.domain.chat import ChatDestination
from intake.ports.sealer import Sealer


class SqlChats:
    def __init__(self, ex: Executor, sealer: Sealer) -> None:
        self._ex = ex
        self._sealer = sealer

    async def add(self, destination: ChatDestination, at_most: int | None = None) -> None:
        params = self._ex.rows.chat_params(sealed_chat(destination, self._sealer))
        form_id = destination.form_id
        await insert_capped(
            self._ex,
            chat_sql.INSERT_CHAT,
            params,
            count=chat_sql.COUNT_CHATS,
            form_id=form_id,
            at_most=at_most,
        )

    async def get(
        self, destination_id: str, workspace_id: str | None = None
    ) -> ChatDestination | None:
        if workspace_id is None:
            row = await self._ex.fetch_one(chat_sql.GET_CHAT, (destination_id,))
        else:
            params = (destination_id, workspace_id)
            row = await self._ex.fetch_one(chat_sql.GET_CHAT_IN, params)
        return None if row is None else self._opened(row)

    async def of_form(self, form_id: str) -> list[ChatDestination]:
        rows = await self._ex.fetch_all(chat_sql.LIST_CHATS, (form_id,))
        return [self._opened(row) for row in rows]

    def _opened(self, row: Row) -> ChatDestination:
        return opened_chat(self._ex.rows.chat_from_row(row), self._sealer)

    async def remove(self, destination_id: str) -> bool:
        """The destination and its undelivered deliveries, in one transaction."""
        return await self._ex.transaction(
            removed, chat_sql.REMOVE_CHAT, chat_sql.DROP_UNDELIVERED_CHAT, destination_id
        )


async def removed(tx: Transaction, remove: str, drop_undelivered: str, destination_id: str) -> bool:
    """The destination and its undelivered deliveries, if it was there."""
    if await tx.execute(remove, (destination_id,)) == 0:
        return False
    await tx.execute(drop_undelivered, (destination_id,))
    return True
