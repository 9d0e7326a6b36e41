"""Brace patterns, as webdataset users write shard lists: ``"s3://b/train-{0000..0011}.tar"``.

* ``{first..last}`` (optionally ``{first..last..step}``): integers from ``first`` to ``last``
  inclusive, counting down when ``last < first``; when either bound is written with a leading
  zero (``0000``), every number is zero-padded to the wider bound's width.
* ``{a,b,c}``: each alternative in turn; alternatives may hold patterns themselves
  (``{train-{0..1},val-0}``).
* Several groups in one pattern give every combination, the leftmost group varying slowest.

A list (or any sequence) of URLs passes through unchanged. There is no escaping: a URL with a
literal ``{`` or ``}`` must be given in a list.
"""

from __future__ import annotations

from collections.abc import Iterable


def expand_urls(urls: str | Iterable[str]) -> list[str]:
    """The URLs a brace pattern names (see the module docstring), or the given URLs.

    Raises:
        ValueError: a malformed pattern (an unmatched brace, an empty group, a group with a
            single alternative, a range whose bounds are not integers, a step of 0), naming
            the pattern.
    """
    if not isinstance(urls, str):
        out = list(urls)
        for url in out:
            if not isinstance(url, str):
                raise ValueError(f"shard URLs must be strings, got {url!r}")
        return out
    try:
        return _expand(urls)
    except ValueError as exc:
        raise ValueError(f"malformed brace pattern {urls!r}: {exc}") from None


def _expand(pattern: str) -> list[str]:
    start = pattern.find("{")
    stray = pattern.find("}")
    if start < 0:
        if stray >= 0:
            raise ValueError(f"'}}' at {stray} has no opening brace")
        return [pattern]
    if 0 <= stray < start:
        raise ValueError(f"'}}' at {stray} has no opening brace")
    end = _closing(pattern, start)
    head, body, tail = pattern[:start], pattern[start + 1:end], pattern[end + 1:]
    tails = _expand(tail)
    return [head + choice + rest for choice in _alternatives(body) for rest in tails]


def _closing(pattern: str, start: int) -> int:
    """The index of the brace closing the one at ``start``."""
    depth = 0
    for i in range(start, len(pattern)):
        if pattern[i] == "{":
            depth += 1
        elif pattern[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"'{{' at {start} is never closed")


def _alternatives(body: str) -> list[str]:
    """What one group stands for, in order."""
    parts = _top_level_split(body)
    if len(parts) > 1:
        return [expanded for part in parts for expanded in _expand(part)]
    if ".." in body and "{" not in body:
        return _range(body)
    if not body:
        raise ValueError("empty group '{}'")
    raise ValueError(f"group '{{{body}}}' is neither a list 'a,b' nor a range 'first..last'")


def _top_level_split(body: str) -> list[str]:
    """``body`` split at the commas outside nested groups."""
    parts, depth, last = [], 0, 0
    for i, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[last:i])
            last = i + 1
    parts.append(body[last:])
    return parts


def _range(body: str) -> list[str]:
    fields = body.split("..")
    if len(fields) not in (2, 3) or not all(_is_int(f) for f in fields):
        raise ValueError(f"range '{{{body}}}' must be 'first..last' or 'first..last..step' "
                         "with integer bounds")
    first, last = int(fields[0]), int(fields[1])
    step = abs(int(fields[2])) if len(fields) == 3 else 1
    if step == 0:
        raise ValueError(f"range '{{{body}}}' has a step of 0")
    padded = any(_leading_zero(f) for f in fields[:2])
    width = max(len(fields[0].lstrip("+")), len(fields[1].lstrip("+"))) if padded else 0
    direction = 1 if last >= first else -1
    numbers = range(first, last + direction, step * direction)
    return [f"{n:0{width}d}" if width else str(n) for n in numbers]


def _is_int(text: str) -> bool:
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isdigit() and digits.isascii()


def _leading_zero(text: str) -> bool:
    digits = text.lstrip("+-")
    return len(digits) > 1 and digits.startswith("0")
