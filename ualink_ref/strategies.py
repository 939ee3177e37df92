"""Public Hypothesis strategies (the documented entry point).

The strategies live in :mod:`ualink_ref.testing.strategies`; this module
re-exports them so ``from ualink_ref.strategies import dl_flits`` keeps
working. Importing it needs Hypothesis (the ``test`` extra).
"""

from __future__ import annotations

from ualink_ref.testing.strategies import *  # noqa: F403
from ualink_ref.testing.strategies import __all__ as __all__
