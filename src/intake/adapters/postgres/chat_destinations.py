"""A form's chat destinations over the pool, their secret sealed as it is written and
opened as it is read (sealed_columns.py)."""

from __future__ import annotations

from intake.adapters import chat_statements as chat_sql
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.destination_caps import insert_capped
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.sealed_columns import opened_chat, sealed_chat
from intake.adapters.sql_statements import for_psycopg
from intake.domain.chat import ChatDestination
from intake.ports.sealer import Sealer

_INSERT_CHAT = for_psycopg(chat_sql.INSERT_CHAT)
_GET_CHAT = for_psycopg(chat_sql.GET_CHAT)
_GET_CHAT_IN = for_psycopg(chat_sql.GET_CHAT_IN)
_LIST_CHATS = for_psycopg(chat_sql.LIST_CHATS)
_REMOVE_CHAT = for_psycopg(chat_sql.REMOVE_CHAT)
_COUNT_CHATS = for_psycopg(chat_sql.COUNT_CHATS)
_DROP_UNDELIVERED_CHAT = for_psycopg(chat_sql.DROP_UNDELIVERED_CHAT)
# The fan-out's lookup: every chat destination of the forms of a batch of events.
FORMS_CHATS = for_psycopg(chat_sql.SELECT_CHAT) + " WHERE form_id = ANY (%s)"


class PostgresChats:
    def __init__(self, db: Database, sealer: Sealer) -> None:
        self._db = db
        self._sealer = sealer

    async def add(self, destination: ChatDestination, at_most: int | None = None) -> None:
        params = ROW_MAPPER.chat_params(sealed_chat(destination, self._sealer))
        form_id = destination.form_id
        await insert_capped(
            self._db, _INSERT_CHAT, params, count=_COUNT_CHATS, form_id=form_id, at_most=at_most
        )

    async def get(
        self, destination_id: str, workspace_id: str | None = None
    ) -> ChatDestination | None:
        if workspace_id is None:
            row = await self._db.fetch_one(_GET_CHAT, (destination_id,))
        else:
            row = await self._db.fetch_one(_GET_CHAT_IN, (destination_id, workspace_id))
        return None if row is None else opened_chat(ROW_MAPPER.chat_from_row(row), self._sealer)

    async def of_form(self, form_id: str) -> list[ChatDestination]:
        rows = await self._db.fetch_all(_LIST_CHATS, (form_id,))
        return [opened_chat(ROW_MAPPER.chat_from_row(row), self._sealer) for row in rows]

    async def remove(self, destination_id: str) -> bool:
        """The destination and its undelivered deliveries, in one transaction."""
        async with self._db.connection() as conn, conn.transaction():
            removed = (await conn.execute(_REMOVE_CHAT, (destination_id,))).rowcount
            if removed == 0:
                return False
            await conn.execute(_DROP_UNDELIVERED_CHAT, (destination_id,))
        return True
