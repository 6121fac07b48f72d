"""Step 1's lookups, kept by the PostgreSQL store: every submission starts by resolving
its form and workspace, and a busy form is resolved hundreds of times a second to the
same rows. Kept, that round trip is saved on all but the first request per form after
each change.

Nothing kept outlives a change, whichever process makes it (the `intake` command,
another worker or host): triggers on the forms and workspaces tables send
pg_notify('intake_forms') with every change (migration 0005), and the store, listening
on a connection of its own (postgres/form_changes_listener.py), empties the cache on each
notification. Notifications sent while that connection is down are lost, so the cache
serves nothing until it is listening again, and starts empty each time it is. A lookup
that was asked before an emptying keeps nothing: it may have read the rows as they were
before the change. A change made through this process's own store empties the cache at
once, without waiting for the notification. The `ttl` is a backstop only.

Only forms that passed steps 1 and 2 are kept, so a form resumed, reactivated, made
public or created is served at once. Whether anything is stored is decided by the
commit anyway, which checks the form again in its own transaction (FormCheck).

The SQLite store keeps its lookups for SQLITE_TTL only: a change made by another process
(the `intake` command, another worker) cannot be announced cheaply, so it applies to
steps 1 and 2 within that time, and at once to the commit, which checks the form again.
Its lookup is a hop to the database thread, and a busy form is looked up hundreds of
times a second: kept even this briefly, that hop is made a few dozen times a second.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from intake.domain.model import FormMode
from intake.ports.forms import FormContext

DEFAULT_TTL = 1.0  # seconds
# The two kinds of lookup; by public key, a protected form is refused (not kept).
PUBLIC_KEY = "key:"
FORM_ID = "id:"
SQLITE_TTL = 0.05  # seconds: how stale another process's change may be in steps 1 and 2
DEFAULT_MAX_ENTRIES = 10_000


class FormCache:
    """Forms by lookup key, each for `ttl` seconds at most, while the cache is
    connected to what announces changes (`connect`, `disconnect`; it starts
    disconnected, serving nothing). Only forms that steps 1 and 2 let through are kept
    (found, enabled, their workspace active, and public when looked up by public key):
    a form that was refused is asked again each time, so that a form resumed,
    reactivated, made public or newly created is served at once."""

    def __init__(
        self,
        ttl: float = DEFAULT_TTL,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
        wanted: Callable[[], None] | None = None,
    ) -> None:
        """`wanted`: called by a lookup while the cache is disconnected (to start
        listening); it must return at once."""
        self._ttl = ttl
        self._max = max_entries
        self._clock = clock
        self._wanted = wanted
        self._entries: dict[str, tuple[float, FormContext]] = {}
        self._connected = False
        # Counts the emptyings: a lookup asked before one keeps nothing.
        self._generation = 0

    @property
    def connected(self) -> bool:
        return self._connected

    def ticket(self) -> int:
        """Taken before asking the database; `put` keeps the answer only if nothing
        emptied the cache since."""
        return self._generation

    def get(self, key: str) -> FormContext | None:
        if not self._connected:
            if self._wanted is not None:
                self._wanted()
            return None
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, context = entry
        if self._clock() >= expires:
            del self._entries[key]
            return None
        return context

    def put(self, key: str, context: FormContext, *, public: bool, ticket: int) -> None:
        """`public`: looked up by public key, where a protected form is refused.
        `ticket`: from `ticket()`, taken before the lookup."""
        if not self._connected or ticket != self._generation or self._ttl <= 0:
            return
        form = context.form
        if not (form.enabled and context.workspace.active) or (
            public and form.mode is FormMode.PROTECTED
        ):
            return
        if len(self._entries) >= self._max:
            # Many forms at once: start over rather than track ages; each is one
            # lookup away.
            self._entries.clear()
        self._entries[key] = (self._clock() + self._ttl, context)

    async def lookup(
        self, kind: str, value: str, ask: Callable[[], Awaitable[FormContext | None]]
    ) -> FormContext | None:
        """The kept answer to `kind` + `value`, else `ask()`'s, kept if it may be."""
        kept = self.get(kind + value)
        if kept is not None:
            return kept
        ticket = self.ticket()
        context = await ask()
        if context is not None:
            self.put(kind + value, context, public=kind == PUBLIC_KEY, ticket=ticket)
        return context

    def clear(self) -> None:
        self._generation += 1
        self._entries.clear()

    def connect(self) -> None:
        """Changes are announced from now on: serve, from empty (what was announced
        before is lost)."""
        self.clear()
        self._connected = True

    def disconnect(self) -> None:
        """Changes may go unannounced: serve nothing until `connect`."""
        self._connected = False
        self.clear()
