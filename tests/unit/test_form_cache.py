"""The PostgreSQL store's cache of step 1's lookups: a form is kept for its time and no
longer, only while changes can be heard of, and never from a lookup asked before the
cache was emptied (the notifications that empty it are in
tests/contract/test_postgres_form_cache.py; what the commit checks again, in
tests/contract/test_postgres_form_check.py)."""

from __future__ import annotations

from intake.adapters.form_cache import FormCache
from intake.domain.model import Form, FormMode, Workspace
from intake.ports.forms import FormContext


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _context() -> FormContext:
    return FormContext(Form("frm_1", "ws_1", "pk1"), Workspace("ws_1", "Acme"))


def _connected(cache: FormCache) -> FormCache:
    cache.connect()
    return cache


def _put(cache: FormCache, key: str, context: FormContext, *, public: bool = True) -> None:
    cache.put(key, context, public=public, ticket=cache.ticket())


def test_the_cache_keeps_a_form_for_its_time_and_no_longer() -> None:
    clock = Clock()
    cache = _connected(FormCache(1.0, clock=clock))
    _put(cache, "key:a", _context())

    clock.now += 0.999
    assert cache.get("key:a") == _context()
    clock.now += 0.001
    assert cache.get("key:a") is None


def test_a_cache_without_time_keeps_nothing_and_a_full_one_starts_over() -> None:
    assert _connected(FormCache(0)).get("key:a") is None
    none = _connected(FormCache(0))
    _put(none, "key:a", _context())
    assert none.get("key:a") is None

    small = _connected(FormCache(60, max_entries=2))
    _put(small, "key:a", _context())
    _put(small, "key:b", _context())
    _put(small, "key:c", _context())
    assert small.get("key:a") is None
    assert small.get("key:c") == _context()


def test_only_forms_that_steps_1_and_2_let_through_are_kept() -> None:
    cache = _connected(FormCache(60))
    paused = FormContext(Form("frm_1", "ws_1", "pk1", enabled=False), Workspace("ws_1", "A"))
    suspended = FormContext(Form("frm_1", "ws_1", "pk1"), Workspace("ws_1", "A", active=False))
    protected = FormContext(
        Form("frm_1", "ws_1", "pk1", mode=FormMode.PROTECTED), Workspace("ws_1", "A")
    )

    _put(cache, "key:paused", paused)
    _put(cache, "key:suspended", suspended)
    _put(cache, "key:protected", protected)
    _put(cache, "id:protected", protected, public=False)

    # A resumed, reactivated or opened form is looked up afresh, so served at once.
    assert cache.get("key:paused") is None
    assert cache.get("key:suspended") is None
    assert cache.get("key:protected") is None
    # The server route reaches a protected form.
    assert cache.get("id:protected") == protected


def test_a_disconnected_cache_serves_nothing_and_asks_to_be_connected() -> None:
    wanted: list[None] = []
    cache = FormCache(60, wanted=lambda: wanted.append(None))

    # New: nothing announces changes yet.
    _put(cache, "key:a", _context())
    assert cache.get("key:a") is None
    assert len(wanted) == 1

    cache.connect()
    _put(cache, "key:a", _context())
    assert cache.get("key:a") == _context()
    assert len(wanted) == 1  # a connected cache asks for nothing

    # Lost: what it held may be stale, and what it is given too.
    cache.disconnect()
    assert cache.get("key:a") is None
    _put(cache, "key:b", _context())
    assert cache.get("key:b") is None
    assert len(wanted) == 3

    # Back: it starts empty, then keeps again.
    cache.connect()
    assert cache.get("key:a") is None
    _put(cache, "key:a", _context())
    assert cache.get("key:a") == _context()


def test_a_lookup_asked_before_the_cache_was_emptied_is_not_kept() -> None:
    cache = _connected(FormCache(60))
    before_change = cache.ticket()
    cache.clear()  # a change was announced while the lookup was on its way

    cache.put("key:a", _context(), public=True, ticket=before_change)
    assert cache.get("key:a") is None

    reconnected = _connected(FormCache(60))
    before_loss = reconnected.ticket()
    reconnected.disconnect()
    reconnected.connect()
    reconnected.put("key:a", _context(), public=True, ticket=before_loss)
    assert reconnected.get("key:a") is None
