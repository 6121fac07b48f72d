"""What a post shows once, on the page it leads to (post, redirect, get): a new API key,
a new webhook endpoint's signing secret, an erasure's receipt, what an invitation sent.
The post keeps it for its session; the page takes it, so a reload, Back or Forward shows
it no more and posts nothing again. Never in a URL: the page's address names only what
was made (an id, shown anyway)."""

from __future__ import annotations

import json
from datetime import timedelta

from intake.service.accounts.base import AccountsBase, SignedIn

# Between a post and the page it redirects to: a browser follows at once.
NOTE_LIFETIME = timedelta(minutes=10)


class Notes(AccountsBase):
    """What a post keeps for the page it leads to."""

    async def keep_secret(self, signed: SignedIn, kind: str, subject: str, secret: str) -> None:
        """Keeps `secret` for the next page of this session about `subject` (the id of
        the key or endpoint of `kind` just made), in place of any kept before."""
        note = json.dumps({"kind": kind, "subject": subject, "secret": secret})
        now = self._clock.now()
        await self._store.notes.keep(
            signed.session.session_id, note, now=now, expires_at=now + NOTE_LIFETIME
        )

    async def take_secret(self, signed: SignedIn, kind: str, subject: str) -> str | None:
        """The secret kept for this page, once: None when none was, it was shown already,
        it expired, or it was about something else (then it is dropped all the same)."""
        taken = await self._store.notes.take(signed.session.session_id, self._clock.now())
        if taken is None:
            return None
        note = json.loads(taken)
        if note.get("kind") != kind or note.get("subject") != subject:
            return None
        secret = note.get("secret")
        return secret if isinstance(secret, str) else None
