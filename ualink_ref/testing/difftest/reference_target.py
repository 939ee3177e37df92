"""The model itself as a line-protocol target (``specs/difftest.md``).

``python -m ualink_ref.testing.difftest.reference_target --layer dl`` reads request
lines on stdin and answers each with the model's response line. It is the
known-good target (difftest against it must find nothing) and a template for
writing a wrapper around another implementation.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from ualink_ref.testing.difftest.api import model_outcome
from ualink_ref.testing.difftest.layers import CODECS
from ualink_ref.testing.difftest.protocol import Outcome


def respond(codec_name: str, line: str) -> str:
    """The model's response line to one request line (a malformed request is ``ERR``)."""
    codec = CODECS[codec_name]
    try:
        data = codec.parse_request(line)
    except ValueError:
        return Outcome("").line()
    return model_outcome(codec, data).line()


def serve(answer: Callable[[str], str]) -> int:
    """Answer each request line on stdin with ``answer(line)`` on stdout, one line each,
    flushed (the peer waits for it), until stdin closes; return exit status 0."""
    for line in sys.stdin:
        sys.stdout.write(answer(line) + "\n")
        sys.stdout.flush()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Serve requests on stdin until it closes."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layer", required=True, choices=sorted(CODECS))
    args = parser.parse_args(argv)
    return serve(lambda line: respond(args.layer, line))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
