"""An implementation under test run as a subprocess speaking the line protocol.

The command is started once; each :meth:`SubprocessTarget.exchange` writes
one request line to its stdin and reads one response line from its stdout
(``specs/difftest.md``). A response that does not come within ``timeout``
seconds, or a process that exits, is a :class:`TargetProtocolError`. The
target's stderr is passed through untouched (it is the place for its logs).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import subprocess
import time
from collections.abc import Sequence
from types import TracebackType

from ualink_ref.errors import TargetProtocolError


class SubprocessTarget:
    """A line-protocol target: ``command`` (a string split like a shell, or an argv list)."""

    def __init__(self, command: str | Sequence[str], *, timeout: float = 60.0) -> None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise TargetProtocolError("empty target command", "")
        self.argv = argv
        self.timeout = timeout
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      bufsize=0)
        assert self._proc.stdout is not None
        self._fd = self._proc.stdout.fileno()
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)
        self.exchanges = 0

    def exchange(self, line: str) -> str:
        """Send one request line and return the response line (without newline)."""
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode("ascii") + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise TargetProtocolError(
                f"target {self.argv[0]!r} exited (status {self._proc.poll()})", "") from None
        self.exchanges += 1
        return self._read_line()

    def _read_line(self) -> str:
        end = time.monotonic() + self.timeout
        while b"\n" not in self._buffer:
            left = end - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise TargetProtocolError(
                    f"no response from target within {self.timeout} s", "")
            chunk = os.read(self._fd, 65536)
            if not chunk:
                raise TargetProtocolError(
                    f"target {self.argv[0]!r} exited (status {self._proc.wait()})", "")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return raw.decode("ascii").rstrip("\r")
        except UnicodeDecodeError:
            raise TargetProtocolError("response is not ASCII", repr(raw[:80])) from None

    def close(self) -> int | None:
        """Close stdin (the target's signal to exit) and wait briefly; kill if it lingers."""
        self._selector.close()
        if self._proc.stdin:
            with contextlib.suppress(OSError):  # already gone: nothing to close
                self._proc.stdin.close()
        try:
            return self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            return self._proc.wait()
        finally:
            if self._proc.stdout:
                self._proc.stdout.close()

    def __enter__(self) -> SubprocessTarget:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


__all__ = ["SubprocessTarget"]
