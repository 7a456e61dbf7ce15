"""The CLI's own words around an answer read as sentences in the answer's language:
no field names (``max_price_per_hour``) and no English in a zh table."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from service.cli.main import app
from service.cli.render import ESTIMATED, relax_line
from tests.conftest import BUILTIN_PROVIDERS

ENV = {"SUANLI_PLUGINS": ",".join(BUILTIN_PROVIDERS), "COLUMNS": "200", "SUANLI_URL": ""}
# No server rents for one fen an hour: every candidate falls to the price cap.
TOO_CHEAP = ["recommend", "--model", "llama-2-7b", "--tokens", "20M", "--max-price", "0.01"]
FIELD_NAME = re.compile(r"\b[a-z]+_[a-z_]+\b")


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env=ENV)
    assert result.exit_code == 0, (result.stdout, result.exception)
    return result.stdout


def test_relax_hints_name_the_constraint_in_words_in_both_languages() -> None:
    answer = json.loads(_run(*TOO_CHEAP, "--lang", "zh", "--json"))
    assert answer["options"] == []
    hints = answer["relax"]
    assert "max_price_per_hour" in {h["constraint"] for h in hints}
    zh = _run(*TOO_CHEAP, "--lang", "zh")
    en = _run(*TOO_CHEAP, "--lang", "en")
    assert "放宽单价上限可多" in zh
    assert "without the price cap:" in en
    for table in (zh, en):
        relax = [line for line in table.splitlines() if line.startswith("- ")]
        assert relax, table
        assert not [line for line in relax if "max_price_per_hour" in line]
    assert "without" not in zh


def test_relax_line_words() -> None:
    hint = {"constraint": "deadline_hours", "removed": 3, "nearest": None}
    assert relax_line(hint, "en") == "- without the deadline: 3 more candidates"
    assert relax_line(hint, "zh") == "- 放宽截止时间可多 3 个候选"


def test_the_estimate_mark_names_no_field() -> None:
    for text in ESTIMATED.values():
        assert not FIELD_NAME.search(text), text
