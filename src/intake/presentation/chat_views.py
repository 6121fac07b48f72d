"""The one JSON shape of a chat destination, whoever prints it."""

from __future__ import annotations

from intake.domain.chat import ChatDestination


def chat_view(destination: ChatDestination) -> dict[str, object]:
    # Never the webhook URL nor the bot token: either lets anyone post to the channel.
    created = destination.created_at
    return {
        "destination_id": destination.destination_id,
        "form_id": destination.form_id,
        "kind": destination.app.value,
        "target": destination.shown_target,
        "include_flagged": destination.include_flagged,
        "created_at": None if created is None else created.isoformat(),
    }
