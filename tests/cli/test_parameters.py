"""One table (service/clients/parameters.py), two front doors: the CLI's options and the
MCP tools' arguments are exactly its parameters, with its names, types and texts."""

from __future__ import annotations

import pytest
import typer.core
import typer.main
from mcp.server.mcpserver.exceptions import ToolError

from service.cli.main import app
from service.clients import parameters
from service.clients.backend import HttpBackend
from service.clients.parameters import Param, cli_params, tool_params
from service.mcp.server import build_mcp

QUESTIONS = [
    ("recommend", "recommend_servers", parameters.RECOMMEND),
    ("estimate", "estimate_resources", parameters.ESTIMATE),
    ("offers", "list_offers", parameters.OFFERS),
]
# Nothing answers on port 9: a tool that reached the backend would fail loudly.
NOWHERE = HttpBackend("http://127.0.0.1:9")


def _command(name: str) -> typer.core.TyperCommand:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    command = group.commands[name]
    assert isinstance(command, typer.core.TyperCommand)
    return command


@pytest.mark.parametrize(("command", "tool", "params"), QUESTIONS)
def test_cli_options_are_the_table(command: str, tool: str, params: tuple[Param, ...]) -> None:
    options = {p.name: p for p in _command(command).params if isinstance(p, typer.core.TyperOption)}
    assert list(options) == [p.name for p in cli_params(params)] + ["url", "as_json"]
    for param in cli_params(params):
        option = options[param.name]
        assert sorted(option.opts) == sorted(param.flags), param.name
        assert option.help == param.help
        assert option.default == param.default
        if param.metavar:
            assert option.metavar == param.metavar


async def test_tool_arguments_are_the_table() -> None:
    server = build_mcp(NOWHERE)
    listed = {t.name: t for t in await server.list_tools()}
    for _, tool, params in QUESTIONS:
        properties = listed[tool].input_schema["properties"]
        assert list(properties) == [p.name for p in tool_params(params)]
        for param in tool_params(params):
            assert properties[param.name]["description"] == param.description
            assert properties[param.name].get("default") == param.argument_default
    # choices come from one Literal: the CLI's and the tool's lists are the same
    kind = listed["recommend_servers"].input_schema["properties"]["kind"]["anyOf"][0]["enum"]
    cli_kind = next(p for p in _command("recommend").params if p.name == "kind")
    assert (
        list(getattr(cli_kind.type, "choices", ()))
        == kind
        == ["pretrain", "finetune", "inference", "preprocess"]
    )


def test_a_shell_form_has_its_own_option_and_a_tool_argument_its_own() -> None:
    offers = {p.name: p for p in parameters.OFFERS}
    assert not offers["count"].tool  # --count 2..8 is min_ and max_accelerators in a tool
    assert not offers["min_accelerators"].flags
    assert offers["fold_regions"].argument_default is True
    assert offers["limit"].default is None  # the CLI leaves the page size to the API
    assert offers["limit"].argument_default == 20


async def test_a_placement_without_accelerator_is_a_tool_error_naming_the_argument() -> None:
    server = build_mcp(NOWHERE)
    with pytest.raises(ToolError, match="need accelerator"):
        await server.call_tool("estimate_resources", {"model": "llama-2-7b", "count": 2})
