"""``python -m ualink_ref.cli``: the same as the ``ualink-ref`` command."""

from ualink_ref.cli import main

raise SystemExit(main())
