"""The SQL of chat destinations, once for both SQL stores (`?` and `:name`; PostgreSQL
reads them through `for_psycopg`)."""

from __future__ import annotations

from intake.adapters.sql_statements import in_workspace

INSERT_CHAT = """
    INSERT INTO chat_destinations (
        destination_id, form_id, app, secret, chat_id, include_flagged, created_at
    ) VALUES (
        :destination_id, :form_id, :app, :secret, :chat_id, :include_flagged, :created_at
    )
"""
SELECT_CHAT = """
    SELECT destination_id, form_id, app, secret, chat_id, include_flagged, created_at
    FROM chat_destinations
"""
GET_CHAT = SELECT_CHAT + " WHERE destination_id = ?"
GET_CHAT_IN = in_workspace(GET_CHAT, "chat_destinations")
LIST_CHATS = SELECT_CHAT + " WHERE form_id = ? ORDER BY created_at NULLS FIRST, destination_id"
COUNT_CHATS = "SELECT count(*) AS n FROM chat_destinations WHERE form_id = ?"
REMOVE_CHAT = "DELETE FROM chat_destinations WHERE destination_id = ?"
# A removed destination's undelivered deliveries go with it; the delivered stay. Their
# attempts go by the cascade.
DROP_UNDELIVERED_CHAT = """
    DELETE FROM deliveries
    WHERE kind = 'chat' AND destination_id = ? AND state <> 'delivered'
"""
# A claimed delivery's chat destination, its columns aliased `ch_*` (the claim joins
# chat_destinations AS ch by kind, beside the endpoints and recipients).
CLAIMED_CHAT_WITH = """,
        ch.destination_id AS ch_destination_id, ch.form_id AS ch_form_id, ch.app AS ch_app,
        ch.secret AS ch_secret, ch.chat_id AS ch_chat_id,
        ch.include_flagged AS ch_include_flagged, ch.created_at AS ch_created_at"""
