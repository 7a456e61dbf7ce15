"""The ``suanli`` command line (typer + rich); see :mod:`service.cli.main`."""

from service.cli.main import app, main

__all__ = ["app", "main"]
