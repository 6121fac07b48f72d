"""The two ways a filter is taught in the run (the TREC spam track's online feedback)."""

from __future__ import annotations

from enum import Enum


class Mode(Enum):
    FULL = "full"  # every message taught its true label, right after it is scored
    ERRORS = "errors"  # only the filter's mistakes corrected, as owners really do

    @property
    def title(self) -> str:
        if self is Mode.FULL:
            return "every label taught"
        return "mistakes corrected"
