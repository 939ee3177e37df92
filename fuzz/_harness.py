"""Shared plumbing of the atheris harnesses: every decoder may raise only DecodeError.

A harness module defines ``TestOneInput`` with :func:`only_decode_errors` and
calls :func:`main` when run as a script. Anything but a ``DecodeError``
escaping the decoder is a crash that atheris reports (and that becomes a
regression test in ``tests/``).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

from ualink_ref.errors import DecodeError


def only_decode_errors(decode: Callable[[bytes], Any]) -> Callable[[bytes], None]:
    """A ``TestOneInput`` that feeds the fuzzer's bytes to ``decode``."""

    def test_one_input(data: bytes) -> None:
        with contextlib.suppress(DecodeError):
            decode(data)

    return test_one_input


def main(test_one_input: Callable[[bytes], None]) -> None:
    """Run ``test_one_input`` under atheris with the command line's libFuzzer options."""
    import atheris

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
