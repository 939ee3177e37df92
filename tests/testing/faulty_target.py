"""A line-protocol target that answers as the model does, except when it misbehaves on purpose.

Used by tests/testing/test_difftest_targets.py: ``python faulty_target.py CODEC MODE [ARG]``.

Modes (which inputs is decided by a hash of the request line, so it is the same in every
process, or by a line count, which restarts with each process):

* ``segfault RATE``: SIGSEGV itself on that fraction of inputs;
* ``segfault-short N``: SIGSEGV itself on every input shorter than N bytes;
* ``hang-once MARKER``: stop answering (sleep) on its 30th line, once: the first time it
  creates the file MARKER, and a process that finds it never hangs;
* ``hang RATE``: stop answering on that fraction of inputs, every time;
* ``exit-after N``: exit with status 0 when asked line N + 1;
* ``close-output N``: close its stdout after N answers and keep running;
* ``garbage-text RATE`` / ``garbage-binary RATE`` / ``two-lines RATE`` / ``wrong-shape RATE``:
  on that fraction of inputs write a non-protocol line, non-ASCII bytes, the answer twice,
  or hex where the codec answers JSON.

The model is imported only to answer (a crash before that costs no import), so a restart
that ends in the same crash is quick.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import time


def _selected(line: str, rate: float) -> bool:
    digest = hashlib.sha256(line.strip().encode()).digest()
    return int.from_bytes(digest[:4], "big") < rate * 2**32


def main() -> None:
    codec, mode, arg = sys.argv[1], sys.argv[2], sys.argv[3]
    out = sys.stdout.buffer
    for count, line in enumerate(sys.stdin):
        if (mode == "segfault" and _selected(line, float(arg))) or (
                mode == "segfault-short" and len(line.strip()) < 2 * int(arg)):
            os.kill(os.getpid(), signal.SIGSEGV)
        if (mode == "hang" and _selected(line, float(arg))) or (
                mode == "hang-once" and count == 29 and not os.path.exists(arg)):
            if mode == "hang-once":
                open(arg, "w").close()
            time.sleep(3600)
        if mode == "exit-after" and count == int(arg):
            sys.exit(0)
        if mode == "close-output" and count == int(arg):
            os.close(1)
            time.sleep(3600)
        garbage = {"garbage-text": b"Segmentation fault (core dumped)\n",
                   "garbage-binary": b"\xff\xfe\x00garbage\n",
                   "two-lines": b"ERR\nERR\n", "wrong-shape": b"00ff\n"}.get(mode)
        if garbage is not None and _selected(line, float(arg)):
            out.write(garbage)
            out.flush()
            continue
        from ualink_ref.testing.difftest.reference_target import respond

        out.write(respond(codec, line).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
