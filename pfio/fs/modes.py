"""Validation of ``open`` modes, shared by every filesystem."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Mode:
    """A parsed ``open`` mode.

    ``kind`` is one of ``"r"``, ``"w"``, ``"a"``, ``"x"``; ``binary`` is False for text mode;
    ``plus`` is True for update modes (``"r+"``, ``"w+"``, ...).
    """

    kind: str
    binary: bool
    plus: bool

    @property
    def reading(self) -> bool:
        return self.kind == "r" or self.plus

    @property
    def writing(self) -> bool:
        return self.kind != "r" or self.plus

    @property
    def binary_mode(self) -> str:
        """The same mode with ``b`` (what a backend opens under a text wrapper)."""
        return self.kind + ("+" if self.plus else "") + "b"


@lru_cache(maxsize=64)
def parse_mode(mode: str) -> Mode:
    """Parse an ``open`` mode string.

    Raises:
        ValueError: the mode is not one that builtin ``open`` accepts.
    """
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a str, not {type(mode).__name__}")
    chars = set(mode)
    kinds = chars & set("rwax")
    if (
        len(mode) != len(chars)
        or not chars <= set("rwaxbt+")
        or len(kinds) != 1
        or {"b", "t"} <= chars
    ):
        raise ValueError(f"invalid mode: {mode!r}")
    return Mode(kinds.pop(), "b" in chars, "+" in chars)
