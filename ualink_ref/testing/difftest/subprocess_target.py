"""An implementation under test run as a subprocess speaking the line protocol.

Each :meth:`SubprocessTarget.exchange` writes one request line to the
process's stdin and reads one response line from its stdout
(``specs/difftest.md``, "Line protocol"). Every way the process can fail to
answer is a :class:`~ualink_ref.errors.TargetProtocolError`:

* it ends (exits, or a signal kills it) while a request is outstanding:
  :class:`~ualink_ref.errors.TargetCrashed`, naming the status or signal;
* no whole response line within ``timeout`` seconds:
  :class:`~ualink_ref.errors.TargetTimeout` (the process is killed);
* it closes its output or its input but keeps running, or writes a line that
  is not ASCII, longer than :data:`MAX_LINE_BYTES`, or more than one line for
  one request (in the same read, or waiting when the next request is due):
  :class:`~ualink_ref.errors.TargetProtocolError`, the line shown.

After any of these the process is discarded (killed, with its process group,
if still running) and the next :meth:`~SubprocessTarget.exchange` starts a new
one (``restarts`` counts them), so a hunt can go on and shrinking can re-run
inputs. The target's stderr is passed through untouched (it is the place for
its logs).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Sequence
from types import TracebackType

from ualink_ref.errors import ConfigError, TargetCrashed, TargetProtocolError, TargetTimeout

#: Seconds to wait for each response line (``--timeout``); project choice: long enough for
#: a Python target's start-up on a loaded machine (the first line of each process includes
#: it), short enough that a hung run ends within a minute (a hang is not retried).
DEFAULT_TIMEOUT = 30.0
#: Longest response line read (project choice: 8x the longest answer the model can give, a
#: ``capture`` record of its 64 KiB maximum as JSON, about 131 KB; a target flooding its
#: output is told so, not buffered without end).
MAX_LINE_BYTES = 1 << 20
#: Seconds a target that closed a pipe gets to exit, so that its status can be reported.
EXIT_GRACE = 2.0


def split_command(command: str | Sequence[str]) -> list[str]:
    """The argv of a target command: a string is split like a shell does (no shell runs).

    Raises :class:`~ualink_ref.errors.ConfigError` for an empty command or unbalanced quotes.
    """
    try:
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    except ValueError as exc:  # shlex: "No closing quotation"
        raise ConfigError("target", f"cannot split {command!r}: {exc}") from None
    if not argv:
        raise ConfigError("target", "empty target command")
    return argv


class SubprocessTarget:
    """A line-protocol target: ``command`` (a string split like a shell, or an argv list).

    The process starts at once; a command that cannot be started raises
    :class:`~ualink_ref.errors.ConfigError`. Each response line must come within
    ``timeout`` seconds, the first of each process within ``startup_timeout``
    (default: ``timeout``; its start-up is included). ``exchanges`` counts
    request lines sent, ``answered`` the lines the current process has answered,
    ``restarts`` the processes started after the first.
    """

    def __init__(self, command: str | Sequence[str], *, timeout: float = DEFAULT_TIMEOUT,
                 startup_timeout: float | None = None) -> None:
        self.argv = split_command(command)
        self.name = self.argv[0]
        if not timeout > 0 or not (startup_timeout is None or startup_timeout > 0):
            raise ConfigError("timeout", f"must be > 0, got {timeout}, {startup_timeout}")
        self.timeout = timeout
        self.startup_timeout = timeout if startup_timeout is None else startup_timeout
        self.exchanges = 0
        self.answered = 0
        self.restarts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._selector: selectors.BaseSelector | None = None
        self._buffer = b""
        try:
            self._start()
        except OSError as exc:  # not found, not executable
            raise ConfigError("target", f"cannot start {self.name!r}: {exc.strerror or exc}"
                              ) from None

    def _start(self) -> None:
        # Own session: a timeout kills the target's children too (a wrapper script's simulator).
        proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                bufsize=0, start_new_session=True)
        assert proc.stdout is not None
        self._selector = selectors.DefaultSelector()
        self._selector.register(proc.stdout.fileno(), selectors.EVENT_READ)
        self._proc, self._buffer, self.answered = proc, b"", 0

    def restart(self) -> None:
        """Discard the current process (killed if running); the next exchange starts a new one."""
        self._discard()

    def exchange(self, line: str) -> str:
        """Send one request line and return the response line (without its newline)."""
        if self._proc is None:
            try:
                self._start()
            except OSError as exc:
                raise TargetProtocolError(f"cannot restart target {self.name!r}: {exc}", ""
                                          ) from None
            self.restarts += 1
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        if self.answered:
            self._check_nothing_waiting(proc)
        self.exchanges += 1
        try:
            proc.stdin.write(line.encode("ascii") + b"\n")
            proc.stdin.flush()
        except OSError:  # BrokenPipeError: it has exited, or closed its input
            raise self._ended("closed its input") from None
        response = self._read_line(proc)
        self.answered += 1
        return response

    def _check_nothing_waiting(self, proc: subprocess.Popen[bytes]) -> None:
        """Output waiting before a request is written answers no request: an extra line for the
        last one, which arrived after its answer was read (else it would be taken as the next
        request's answer). End of output is left to the exchange to report (it is sticky)."""
        assert proc.stdout is not None and self._selector is not None
        if self._selector.select(0):  # readable now: a read cannot block
            extra = os.read(proc.stdout.fileno(), 65536)
            if extra:
                raise self._bad("more than one line for one request; the extra", extra)

    def _read_line(self, proc: subprocess.Popen[bytes]) -> str:
        assert proc.stdout is not None and self._selector is not None
        limit = self.startup_timeout if self.answered == 0 else self.timeout
        end = time.monotonic() + limit
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_LINE_BYTES:
                raise self._bad(f"response line longer than {MAX_LINE_BYTES} bytes",
                                self._buffer)
            left = end - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                answered = self.answered
                self._discard()
                raise TargetTimeout(self.name, limit, answered)
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                raise self._ended("closed its output")
            self._buffer += chunk
        raw, rest = self._buffer.split(b"\n", 1)
        if rest:  # the next request's answer cannot be here yet: it answered one line twice
            raise self._bad("more than one line for one request; the extra", rest)
        self._buffer = b""
        try:
            return raw.decode("ascii").rstrip("\r")
        except UnicodeDecodeError:
            raise self._bad("response is not ASCII", raw) from None

    def _bad(self, message: str, data: bytes) -> TargetProtocolError:
        """A protocol error showing ``data``; the process is discarded (out of step)."""
        self._discard()
        return TargetProtocolError(message, data[:80].decode("latin-1"))  # a char per byte

    def _ended(self, what: str) -> TargetProtocolError:
        """The error for a process whose pipe closed: its exit status if it exits soon."""
        proc, answered = self._proc, self.answered
        assert proc is not None
        try:
            status = proc.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            self._discard()
            return TargetProtocolError(
                f"target {self.name!r} {what} after answering {answered} line(s) but kept "
                "running (it was killed)", "")
        self._discard()
        return TargetCrashed(self.name, status, answered)

    def _discard(self) -> None:
        proc, self._proc = self._proc, None
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        # No process runs now: the next one, started on demand, has answered nothing (a stale
        # count would make the next fault's answered_before wrong and cost a retry).
        self._buffer, self.answered = b"", 0
        if proc is None:
            return
        if proc.poll() is None:  # still running (and not reaped: its group id is still its own)
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):  # a broken pipe: nothing left to flush
                    pipe.close()
        proc.wait()

    def close(self) -> int | None:
        """Close stdin (the target's signal to exit) and wait briefly; kill it if it lingers.

        Returns the exit status of the current process (``None`` when there is none).
        """
        proc = self._proc
        if proc is None:
            return None
        if proc.stdin is not None:
            with contextlib.suppress(OSError):  # already gone: nothing to close
                proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):  # then _discard kills it
            proc.wait(timeout=min(self.timeout, 5.0))
        self._discard()
        return proc.returncode

    def __enter__(self) -> SubprocessTarget:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


__all__ = ["DEFAULT_TIMEOUT", "EXIT_GRACE", "MAX_LINE_BYTES", "SubprocessTarget",
           "split_command"]
