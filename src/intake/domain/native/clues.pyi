from collections.abc import Mapping, Sequence

# (evidence, the shown clues as (index of the token, f)), or None when nothing is known.
_Judged = tuple[float, tuple[tuple[int, float], ...]] | None
# (evidence, the shown clues as (token, f)), or None when nothing is known.
_Said = tuple[float, tuple[tuple[str, float], ...]] | None

class WordMemo:
    """Each word's f for one Statistics (model.Statistics.word_memo), held packed."""

    def __len__(self) -> int: ...
    def __getitem__(self, word: str, /) -> float: ...
    def __setitem__(self, word: str, f: float, /) -> None: ...
    def get(self, word: str, default: float | None = None, /) -> float | None: ...
    def clear(self) -> None: ...
    def items(self) -> list[tuple[str, float]]: ...

def token_hash(key: bytes, token: str, /) -> int: ...
def fisher_evidence(ln_f: float, ln_not_f: float, clues: int, /) -> float: ...
def combine(found: Sequence[float], /) -> _Judged: ...
def judge_words(
    words: Sequence[str],
    memo: WordMemo,
    tokens: Mapping[int, int],
    key: bytes,
    spam_messages: int,
    ham_messages: int,
    /,
) -> _Judged: ...
def judge_text(
    others: dict[str, None],
    subject: str,
    body: str,
    memo: WordMemo,
    tokens: Mapping[int, int],
    key: bytes,
    spam_messages: int,
    ham_messages: int,
    /,
) -> _Said: ...
