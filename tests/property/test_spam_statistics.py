"""The learning filter's statistics, over any sequence of triage (the memory store; the
contract tests hold every store to it by example): they always equal what the
submissions teach now plus what was seeded; learning then unlearning restores them;
the order of teaching does not change them."""

from __future__ import annotations

import asyncio
import enum

from attrs import frozen
from hypothesis import given
from hypothesis import strategies as st

from intake.adapters.memory import InMemoryStore
from intake.domain.model import Submission
from intake.domain.spam.model import INSTANCE, Label, Lesson
from intake.domain.triage import deletion_event, release_event
from intake.ports.triage import Erasure, Release
from tests.contract.builders import form, plan, seed, submission
from tests.contract.spam_lessons import Snapshot, expected, snapshot

WORKSPACES = ("ws_1", "ws_2")
SUBMISSIONS = 4
_AT = submission(0).created_at

hashes = st.lists(
    st.integers(0, 12) | st.integers(-(2**63), 2**63 - 1), unique=True, max_size=6
).map(lambda found: tuple(sorted(found)))
lessons = st.builds(Lesson, st.sampled_from(WORKSPACES), st.sampled_from(Label), hashes)


class Act(enum.Enum):
    MARK = "mark"
    RELEASE = "release"
    CONFIRM_SPAM = "confirm spam"
    CONFIRM_HAM = "confirm ham"


@frozen
class Step:
    act: Act
    n: int


steps = st.lists(
    st.builds(Step, st.sampled_from(Act), st.integers(0, SUBMISSIONS - 1)), max_size=20
)


def _sub(n: int) -> Submission:
    workspace_id = WORKSPACES[n % 2]
    return submission(n, workspace_id=workspace_id, form_id=f"frm_{workspace_id}")


async def _store(seeded: list[Lesson]) -> InMemoryStore:
    store = InMemoryStore()
    await seed(store, *(form(f"frm_{ws}", ws, f"pk0{ws[-1]}") for ws in WORKSPACES))
    for n in range(SUBMISSIONS):
        await store.submissions.commit(plan(_sub(n)))
    await store.spam.seed(seeded)
    return store


async def _scopes(store: InMemoryStore) -> list[Snapshot]:
    return [await snapshot(store, scope) for scope in (INSTANCE, *WORKSPACES)]


def _expected(taught: list[Lesson]) -> list[Snapshot]:
    return [expected(taught)] + [
        expected(t for t in taught if t.workspace_id == ws) for ws in WORKSPACES
    ]


async def _act(store: InMemoryStore, step: Step, own: dict[int, tuple[int, ...]]) -> None:
    sub = _sub(step.n)
    mine = own[step.n]
    if step.act is Act.MARK:
        await store.submissions.mark_spam(
            sub.submission_id, Lesson(sub.workspace_id, Label.SPAM, mine)
        )
    elif step.act is Act.RELEASE:
        event = release_event(f"evt_{id(step)}", sub, None, _AT)
        taught = Lesson(sub.workspace_id, Label.HAM, mine)
        await store.submissions.release(Release(sub.submission_id, event, "2026-01", taught))
    else:
        label = Label.SPAM if step.act is Act.CONFIRM_SPAM else Label.HAM
        await store.spam.confirm(sub.submission_id, Lesson(sub.workspace_id, label, mine))


async def _teach_then_erase(
    seeded: list[Lesson], story: list[Step], own: list[tuple[int, ...]]
) -> None:
    store = await _store(seeded)
    before = await _scopes(store)
    by_n = dict(enumerate(own))

    for step in story:
        await _act(store, step, by_n)
        taught = []
        for n in range(SUBMISSIONS):
            label = await store.spam.taught(_sub(n).submission_id)
            if label is not None:
                taught.append(Lesson(_sub(n).workspace_id, label, by_n[n]))
        assert await _scopes(store) == _expected([*seeded, *taught])

    for n in range(SUBMISSIONS):
        sub = _sub(n)
        unlearned = Lesson(sub.workspace_id, Label.HAM, by_n[n])  # its label is not read
        event = deletion_event(f"evt_del_{n}", sub, _AT)
        await store.submissions.erase(Erasure(sub.submission_id, event, unlearned))
    assert await _scopes(store) == before


@given(
    st.lists(lessons, max_size=5),
    steps,
    st.lists(hashes, min_size=SUBMISSIONS, max_size=SUBMISSIONS),
)
def test_the_statistics_are_what_is_taught_and_unlearning_restores_them(
    seeded: list[Lesson], story: list[Step], own: list[tuple[int, ...]]
) -> None:
    asyncio.run(_teach_then_erase(seeded, story, own))


async def _in_two_orders(taught: list[Lesson], order: list[int]) -> None:
    one, two = await _store([]), await _store([])
    for each in taught:
        await one.spam.seed([each])
    await two.spam.seed([taught[i] for i in order])
    assert await _scopes(one) == await _scopes(two) == _expected(taught)


@given(
    st.lists(lessons, max_size=8).flatmap(
        lambda t: st.tuples(st.just(t), st.permutations(range(len(t))))
    )
)
def test_the_order_of_teaching_does_not_change_the_statistics(
    drawn: tuple[list[Lesson], list[int]],
) -> None:
    asyncio.run(_in_two_orders(*drawn))
