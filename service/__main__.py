"""``python -m service`` is the ``suanli`` command (see :mod:`service.cli.main`)."""

from __future__ import annotations

from service.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
