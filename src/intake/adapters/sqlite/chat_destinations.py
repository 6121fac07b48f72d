"""A form's chat destinations over the SQLite connection, their secret sealed as it is
written and opened as it is read (sealed_columns.py)."""

from __future__ import annotations

import sqlite3

from intake.adapters import chat_statements as chat_sql
from intake.adapters.sealed_columns import opened_chat, sealed_chat
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.destination_caps import insert_capped
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.adapters.sqlite.worker import Worker
from intake.domain.chat import ChatDestination
from intake.ports.sealer import Sealer


def _add_chat(conn: sqlite3.Connection, destination: ChatDestination, at_most: int | None) -> None:
    params = ROW_MAPPER.chat_params(destination)
    form_id = destination.form_id
    insert_capped(
        conn,
        chat_sql.INSERT_CHAT,
        params,
        count=chat_sql.COUNT_CHATS,
        form_id=form_id,
        at_most=at_most,
    )


def _get_chat(
    conn: sqlite3.Connection, destination_id: str, workspace_id: str | None
) -> ChatDestination | None:
    if workspace_id is None:
        row = conn.execute(chat_sql.GET_CHAT, (destination_id,)).fetchone()
    else:
        row = conn.execute(chat_sql.GET_CHAT_IN, (destination_id, workspace_id)).fetchone()
    return None if row is None else ROW_MAPPER.chat_from_row(row)


def _list_chats(conn: sqlite3.Connection, form_id: str) -> list[ChatDestination]:
    return [ROW_MAPPER.chat_from_row(row) for row in conn.execute(chat_sql.LIST_CHATS, (form_id,))]


def _remove_chat(conn: sqlite3.Connection, destination_id: str) -> bool:
    with transaction(conn):
        if conn.execute(chat_sql.REMOVE_CHAT, (destination_id,)).rowcount == 0:
            return False
        conn.execute(chat_sql.DROP_UNDELIVERED_CHAT, (destination_id,))
    return True


class SqliteChats:
    def __init__(self, worker: Worker, sealer: Sealer) -> None:
        self._worker = worker
        self._sealer = sealer

    async def add(self, destination: ChatDestination, at_most: int | None = None) -> None:
        await self._worker.run(_add_chat, sealed_chat(destination, self._sealer), at_most)

    async def get(
        self, destination_id: str, workspace_id: str | None = None
    ) -> ChatDestination | None:
        destination = await self._worker.run(_get_chat, destination_id, workspace_id)
        return None if destination is None else opened_chat(destination, self._sealer)

    async def of_form(self, form_id: str) -> list[ChatDestination]:
        chats = await self._worker.run(_list_chats, form_id)
        return [opened_chat(destination, self._sealer) for destination in chats]

    async def remove(self, destination_id: str) -> bool:
        """The destination and its undelivered deliveries, in one transaction."""
        return await self._worker.run(_remove_chat, destination_id)
