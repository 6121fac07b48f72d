-- 0014_chat_destinations

-- A form's chat destinations: a Slack, Discord or Teams incoming webhook (its
-- URL in `secret`), or a Telegram bot (its token in `secret`, the chat in
-- chat_id). The URL or token is all it takes to post to the channel, so it
-- has a column of its own, apart from what may be shown. Goes with the form.
            CREATE TABLE chat_destinations (
                destination_id  text COLLATE "C" PRIMARY KEY,
                form_id         text COLLATE "C" NOT NULL
                                REFERENCES forms (form_id) ON DELETE CASCADE,
                app             text COLLATE "C" NOT NULL
                                CHECK (app IN ('slack', 'discord', 'teams', 'telegram')),
                secret          text NOT NULL,
                chat_id         text,
                include_flagged boolean NOT NULL,
                created_at      timestamptz,
                CHECK ((app = 'telegram') = (chat_id IS NOT NULL))
            )
;

-- A form's chat destinations, for the fan-out and the listing (in its order).
            CREATE INDEX chat_destinations_form
                ON chat_destinations (form_id, created_at NULLS FIRST, destination_id)
;

-- A delivery may now go to a chat destination.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_kind_check
;

ALTER TABLE deliveries ADD CONSTRAINT deliveries_kind_check
    CHECK (kind IN ('webhook', 'email', 'chat'))
;
