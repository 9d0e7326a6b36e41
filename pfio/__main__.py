"""``python -m pfio``: the command-line interface (see :mod:`pfio.cli`)."""

from .cli import main

raise SystemExit(main())
