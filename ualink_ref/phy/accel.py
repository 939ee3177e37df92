"""Which FEC engine runs: the compiled kernels (numba, the ``fast`` extra) or numpy.

The compiled path is used automatically when numba imports, unless the
environment variable ``UALINK_REF_NO_NUMBA`` is set to a non-empty value other
than ``0`` (read once, at the first FEC call of the process), or a caller
turned it off with :func:`use_compiled`. Both engines give identical
results; numpy is the always-available fallback.

Nothing here imports numba at module import: the first FEC call does, and
numba then compiles each kernel once or loads it from its on-disk cache.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

#: Set to a non-empty value other than "0" to force the numpy path.
ENV_VAR = "UALINK_REF_NO_NUMBA"

_override: list[bool | None] = [None]
_loaded: list[ModuleType | None] = []


def _load() -> ModuleType | None:
    if not _loaded:
        try:
            from ualink_ref.phy import _numba_kernels
        except ImportError:  # numba not installed (or broken): numpy path
            _loaded.append(None)
        else:
            _loaded.append(_numba_kernels)
    return _loaded[0]


def env_disabled() -> bool:
    """True when ``UALINK_REF_NO_NUMBA`` asks for the numpy path (read now)."""
    return os.environ.get(ENV_VAR, "") not in ("", "0")


_env_off: list[bool] = []


def kernels() -> ModuleType | None:
    """The compiled kernel module, or None when the numpy path must run."""
    if _override[0] is False:
        return None
    if not _env_off:
        _env_off.append(env_disabled())  # once per process: this runs on every FEC call
    if _env_off[0]:
        return None
    return _load()


def compiled_available() -> bool:
    """True when numba imports (whether or not the compiled path is switched off)."""
    return _load() is not None


@contextmanager
def use_compiled(enabled: bool) -> Iterator[None]:
    """Run a block with the compiled path off (``False``) or back to automatic (``True``).

    ``True`` does not force numba into existence: without it the numpy path runs.
    """
    before = _override[0]
    _override[0] = None if enabled else False
    try:
        yield
    finally:
        _override[0] = before
