"""The README's example requests, run through the real app: every figure its abridged
answers show is what the app returns now.

The README shows each ``curl`` request followed by its answer as abridged JSON (``...``
stands for fields and items left out, ``…``/``...`` inside a string for text left out).
This test finds every such pair, sends the request to an app built by ``create_app``
(the shipped catalogs), and walks the README's answer: every key it shows must be in the
answer with the value shown, numbers equal to the answer's rounded to the digits the
README prints, strings equal except where the README abridges them. An answer that
changes (a sizing or catalog change) fails here until the README shows the new figures.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from typer.testing import CliRunner

from service.app import create_app
from service.cli import app as cli_app
from tests.conftest import BUILTIN_PROVIDERS, app_settings

README = Path(__file__).resolve().parent.parent / "README.md"
EXAMPLE = re.compile(
    r"```bash\ncurl -s localhost:8000(?P<path>/\S+) .*?-d '(?P<body>.*?)'\n```\n"
    r"(?:(?!```bash).)*?```json\n(?P<answer>.*?)```",
    re.DOTALL,
)
"""A curl request to the local service and the first JSON block after it (its answer)."""
STRING_OR_ELLIPSIS = re.compile(r'"(?:[^"\\]|\\.)*"|\.\.\.')
ABRIDGED = re.compile(r"\s*(?:…|\.\.\.)\s*")


def examples() -> list[tuple[str, dict[str, Any], str]]:
    text = README.read_text(encoding="utf-8")
    found = [(m["path"], json.loads(m["body"]), m["answer"]) for m in EXAMPLE.finditer(text)]
    assert len(found) >= 2, "the README's curl examples were not found"
    return found


def parse_abridged(text: str) -> Any:
    """The README's abridged JSON as a tree: bare ``...`` (outside strings) dropped with
    its comma; numbers kept as :class:`Decimal` so that their printed digits are known."""
    bare = STRING_OR_ELLIPSIS.sub(lambda m: "" if m.group() == "..." else m.group(), text)
    # the commas around a dropped item: ", ," -> ",", ", }" -> "}"; strings are kept whole
    parts = re.split(r'("(?:[^"\\]|\\.)*")', bare)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r",(\s*,)+", ",", parts[i])
        parts[i] = re.sub(r",\s*(?=[}\]])", "", parts[i])
    return json.loads("".join(parts), parse_float=Decimal)


def check_string(shown: str, actual: Any, where: str) -> None:
    assert isinstance(actual, str), (where, shown, actual)
    pieces = ABRIDGED.split(shown)
    if len(pieces) == 1:
        assert actual == shown, where
        return
    assert actual.startswith(pieces[0]), (where, shown, actual)
    at = len(pieces[0])
    for piece in pieces[1:]:
        found = actual.find(piece, at)
        assert found >= 0, (where, piece, actual)
        at = found + len(piece)


def matches(shown: Any, actual: Any) -> bool:
    try:
        check(shown, actual, "")
    except AssertionError:
        return False
    return True


def check(shown: Any, actual: Any, where: str) -> None:
    """``shown`` (the README's abridged value) agrees with ``actual`` (the answer's)."""
    if isinstance(shown, dict):
        assert isinstance(actual, dict), (where, actual)
        for key, value in shown.items():
            assert key in actual, f"{where}.{key} is not in the answer"
            check(value, actual[key], f"{where}.{key}")
    elif isinstance(shown, list):
        assert isinstance(actual, list), (where, actual)
        if all(isinstance(v, dict | list) for v in shown):
            # ranked options, advice topics, catalogs: the README shows the first items
            assert len(shown) <= len(actual), where
            for i, value in enumerate(shown):
                check(value, actual[i], f"{where}[{i}]")
        else:
            # notes (assumptions, reasons): the README shows some of them, in order
            rest = iter(actual)
            for i, value in enumerate(shown):
                assert any(matches(value, a) for a in rest), f"{where}[{i}]: {value!r}"
    elif isinstance(shown, str):
        check_string(shown, actual, where)
    elif isinstance(shown, bool) or shown is None:
        assert actual is shown, (where, shown, actual)
    elif isinstance(shown, Decimal):
        exponent = shown.as_tuple().exponent
        assert isinstance(exponent, int)
        assert isinstance(actual, int | float), (where, actual)
        # printed digits: the answer rounded to them (half a unit of the last digit)
        assert abs(Decimal(repr(actual)) - shown) <= Decimal(5).scaleb(exponent - 1), (
            where,
            str(shown),
            actual,
        )
    else:
        assert actual == shown, (where, shown, actual)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(app=create_app(app_settings())) as running:
        yield running


@pytest.mark.parametrize(("path", "body", "answer"), examples(), ids=[p for p, _, _ in examples()])
def test_readme_example_shows_the_real_answer(
    client: TestClient[Litestar], path: str, body: dict[str, Any], answer: str
) -> None:
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    check(parse_abridged(answer), response.json(), path)


def test_the_checker_catches_a_stale_figure() -> None:
    """The comparison fails on a changed figure, a missing key or changed text."""
    shown = parse_abridged('{"hours": 4.492, "notes": ["About 3.8 h ...", ...], ...}')
    check(shown, {"hours": 4.4921, "notes": ["x", "About 3.8 h here"], "more": 1}, "")
    for stale in (
        {"hours": 3.815, "notes": ["About 3.8 h here"]},
        {"hours": 4.4926, "notes": ["About 3.8 h here"]},
        {"notes": ["About 3.8 h here"]},
        {"hours": 4.492, "notes": ["About 4.5 h here"]},
    ):
        assert not matches(shown, stale), stale


CONSOLE = re.compile(r"```console\n\$ suanli (?P<args>[^\n]+)\n(?P<output>.*?)```", re.DOTALL)
"""A ``suanli`` command in the README and the output shown under it."""
OFFLINE = ("recommend", "estimate", "offers")
"""Commands that answer from the shipped catalogs (``prices refresh`` asks the clouds)."""
CLI_ENV = {"SUANLI_PLUGINS": ",".join(BUILTIN_PROVIDERS), "COLUMNS": "200", "SUANLI_URL": ""}


def console_examples() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    found = [
        (m["args"], m["output"]) for m in CONSOLE.finditer(text) if m["args"].split()[0] in OFFLINE
    ]
    assert len(found) >= 4, "the README's suanli examples were not found"
    return found


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(("args", "output"), console_examples(), ids=lambda v: v[:40])
def test_readme_cli_example_prints_what_the_readme_shows(args: str, output: str) -> None:
    """The README's command output, figures included, is what the command prints now
    (line wrapping aside; a line ``…`` stands for lines left out, ``...`` in a ``--json``
    document for fields left out)."""
    result = CliRunner().invoke(cli_app, shlex.split(args), env=CLI_ENV)
    if "--json" in args:
        assert result.exit_code == 0, result.stdout
        check(parse_abridged(output), json.loads(result.stdout), args)
        return
    printed = words(result.stdout + result.stderr)
    at = 0
    for part in re.split(r"^…$", output, flags=re.MULTILINE):
        piece = words(part)
        found = printed.find(piece, at)
        assert found >= 0, (args, piece, printed)
        at = found + len(piece)
