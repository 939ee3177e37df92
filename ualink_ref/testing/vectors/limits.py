"""Bounded reading of vector files and artifacts (specs/vectors.md, "Limits").

A vector directory may come from anyone (a third party's RTL bench, a tampered
checkout), so ``verify`` reads it within fixed bounds and turns every way a file
can be unreadable into one :class:`~ualink_ref.errors.VectorFormatError` with a
one-line message — never a traceback, never an unbounded read:

* V1 a vector file or artifact must be a regular file inside the directory
  (after resolving links), at most :data:`MAX_FILE_BYTES` / :data:`MAX_ARTIFACT_BYTES`;
* V2 JSON nesting at most :data:`MAX_DEPTH` levels (checked before parsing, so a
  deeply nested file cannot exhaust the parser's recursion);
* V3 every number at most :data:`MAX_NUMBER_CHARS` characters, and no ``NaN`` /
  ``Infinity`` (not JSON);
* V4 at most :data:`MAX_CASES` cases per file.

The bounds are project choices, far above the committed vectors (largest file
0.39 MB, depth 8, longest number 20 characters, 82 cases).
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np

from ualink_ref.errors import VectorFormatError

#: Largest vector (JSON) file read, bytes (rule V1).
MAX_FILE_BYTES = 16 * 1024 * 1024
#: Largest artifact (pcap, ...) read, bytes (rule V1).
MAX_ARTIFACT_BYTES = 16 * 1024 * 1024
#: Deepest JSON nesting accepted (rule V2).
MAX_DEPTH = 32
#: Longest number accepted, in characters (rule V3).
MAX_NUMBER_CHARS = 100
#: Most cases accepted in one file (rule V4).
MAX_CASES = 100_000

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]")


def read_bounded(directory: Path, name: str, limit: int) -> bytes:
    """The bytes of ``directory / name`` if it is a regular file inside ``directory``
    of at most ``limit`` bytes (rule V1); else :class:`VectorFormatError`."""
    root = directory.resolve()
    path = directory / name
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise VectorFormatError(f"cannot open: {getattr(exc, 'strerror', None) or exc}",
                                name) from None
    if not real.is_relative_to(root):
        raise VectorFormatError("resolves outside the vectors directory", name)
    try:
        st = real.stat()
        if not stat.S_ISREG(st.st_mode):
            raise VectorFormatError("not a regular file", name)
        if st.st_size > limit:
            raise VectorFormatError(f"{st.st_size} bytes, more than the limit {limit}", name)
        with open(real, "rb") as stream:
            data = stream.read(limit + 1)  # never more, whatever the size claimed
    except OSError as exc:
        raise VectorFormatError(f"cannot read: {exc.strerror or exc}", name) from None
    if len(data) > limit:
        raise VectorFormatError(f"more than the limit of {limit} bytes", name)
    return data


def json_depth(text: str) -> int:
    """Deepest nesting of ``[`` / ``{`` in JSON ``text`` (strings ignored)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub('""', text))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def _number(kind: type) -> Any:
    def parse(text: str) -> Any:
        if len(text) > MAX_NUMBER_CHARS:
            raise VectorFormatError(
                f"a number of {len(text)} characters (limit {MAX_NUMBER_CHARS})")
        return kind(text)

    return parse


def _constant(text: str) -> Any:
    raise VectorFormatError(f"{text} is not JSON")


def vector_json_names(directory: Path) -> list[str]:
    """The ``*.json`` names in ``directory``, sorted; :class:`VectorFormatError` when it
    is not a readable directory (every reader of a vectors directory starts here)."""
    try:
        if not directory.is_dir():
            raise NotADirectoryError(f"not a directory: {str(directory)!r:.80}")
        return sorted(p.name for p in directory.glob("*.json"))
    except (OSError, ValueError) as exc:
        raise VectorFormatError(f"cannot read vectors directory: {exc}") from None


def load_vector_json(directory: Path, name: str) -> Any:
    """Parse ``directory / name`` within rules V1-V3 (V4 is checked by the caller)."""
    data = read_bounded(directory, name, MAX_FILE_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VectorFormatError(f"not UTF-8 ({exc.reason} at byte {exc.start})", name) from None
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise VectorFormatError(f"JSON nested {depth} deep (limit {MAX_DEPTH})", name)
    try:
        return json.loads(text, parse_int=_number(int), parse_float=_number(float),
                          parse_constant=_constant)
    except VectorFormatError as exc:
        raise VectorFormatError(str(exc), name) from None
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise VectorFormatError(f"invalid JSON: {message}", name) from None


__all__ = [
    "MAX_ARTIFACT_BYTES",
    "MAX_CASES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NUMBER_CHARS",
    "json_depth",
    "load_vector_json",
    "read_bounded",
    "vector_json_names",
]
