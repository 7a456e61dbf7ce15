"""Settings from SUANLI_* variables; a bad value stops start-up naming the variable."""

from __future__ import annotations

import subprocess
import sys

import pytest

from service.runtime.settings import Settings, SettingsError, load_settings


def test_defaults_need_no_environment() -> None:
    settings = load_settings({})
    assert settings == Settings()
    assert settings.redis_url is None  # embedded in-memory cache by default
    assert (settings.host, settings.port) == ("127.0.0.1", 8000)


def test_values_are_parsed_from_strings() -> None:
    settings = load_settings(
        {
            "SUANLI_PORT": "9000",
            "SUANLI_WORKERS": "4",
            "SUANLI_PLUGINS": "alibaba, tencent",
            "SUANLI_CACHE_TTL_S": "30",
            "SUANLI_LIVE_PRICES": "true",
            "SUANLI_REDIS_URL": "redis://127.0.0.1:6379/0",
        }
    )
    assert settings.port == 9000
    assert settings.workers == 4
    assert settings.plugins == ("alibaba", "tencent")
    assert settings.cache_ttl_s == 30.0
    assert settings.live_prices is True
    assert settings.redis_url == "redis://127.0.0.1:6379/0"


@pytest.mark.parametrize(
    ("variable", "value", "reason"),
    [
        ("SUANLI_PORT", "eighty", "Expected `int`"),
        ("SUANLI_PORT", "70000", "<= 65535"),
        ("SUANLI_WORKERS", "0", ">= 1"),
        ("SUANLI_LOG_LEVEL", "LOUD", "Invalid enum value 'LOUD'"),
        ("SUANLI_CACHE_TTL_S", "-1", "> 0"),
        ("SUANLI_LIVE_PRICES", "maybe", "Expected `bool`"),
    ],
)
def test_invalid_value_names_the_variable(variable: str, value: str, reason: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings({variable: value})
    assert str(info.value).startswith(f"{variable}: ")
    assert reason in str(info.value)


def test_api_key_never_appears_in_repr() -> None:
    settings = load_settings({"SUANLI_API_KEY": "s3cret-token-value"})
    assert settings.api_key == "s3cret-token-value"
    assert "s3cret" not in repr(settings)


def test_cli_stops_with_one_line_naming_the_variable() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "service", "serve"],
        env={"SUANLI_PORT": "not-a-port", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("suanli: configuration error: SUANLI_PORT:")
