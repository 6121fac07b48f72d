from collections.abc import Mapping, Sequence

# (evidence, the shown clues as (index of the token, f)), or None when nothing is known.
_Judged = tuple[float, tuple[tuple[int, float], ...]] | None

def token_hash(key: bytes, token: str, /) -> int: ...
def fisher_evidence(ln_f: float, ln_not_f: float, clues: int, /) -> float: ...
def combine(found: Sequence[float], /) -> _Judged: ...
def judge_words(
    words: Sequence[str],
    memo: dict[str, float],
    tokens: Mapping[int, int],
    key: bytes,
    spam_messages: int,
    ham_messages: int,
    /,
) -> _Judged: ...
