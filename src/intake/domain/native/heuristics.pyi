class Heuristics:
    """The content heuristics (scoring.text_findings), seeking these phrases: each in
    lower case ASCII, starting with a letter, a digit or `_`."""

    def __init__(self, phrases: tuple[str, ...]) -> None: ...
    def findings(self, text: str, /) -> tuple[int, bool, int, int, bool]:
        """(links, a markup link, distinct phrases, gibberish words, shouting)."""
