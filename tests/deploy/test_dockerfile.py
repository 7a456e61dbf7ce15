"""Checks on ``deploy/Dockerfile`` and ``.dockerignore`` without a Docker daemon.

The image cannot be built on this machine, so the Dockerfile is parsed (a small line
parser that joins ``\\`` continuations and drops comments, as BuildKit does) and its
promises are checked one by one: multi-stage, slim Python >= 3.11, numeric non-root
user, a HEALTHCHECK that really works with only the stdlib, ``suanli serve`` as the
entrypoint, no dev extra, and a build context that contains what ``COPY`` needs. The
HEALTHCHECK command is executed for real against a local HTTP server.
"""

from __future__ import annotations

import http.server
import json
import re
import shlex
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

import pytest
import yaml

from service.runtime.settings import Settings, load_settings

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "deploy" / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
APP_PORT = 8000


# ----------------------------------------------------------------- Dockerfile parser


@dataclass(frozen=True)
class Instruction:
    keyword: str
    """Upper-case instruction name (``RUN``, ``COPY``, ...)."""
    args: str
    """Argument text with continuations joined by a space."""
    line: int
    """1-based line where the instruction starts."""

    def exec_form(self) -> list[str]:
        """The JSON array of an exec-form instruction (``CMD ["a", "b"]``)."""
        value = json.loads(self.args)
        assert isinstance(value, list), f"line {self.line}: not an exec form"
        assert all(isinstance(v, str) for v in value)
        return value


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def last(self, keyword: str) -> Instruction:
        found = self.all(keyword)
        assert found, f"stage {self.name or self.base} has no {keyword}"
        return found[-1]


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(start line, instruction text): comments and blank lines dropped, lines ending
    in the escape character ``\\`` joined with the next (comment lines inside a
    continuation are dropped too, as BuildKit does)."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        yield start, " ".join(part for part in pending if part)
        pending = []
    assert not pending, "Dockerfile ends inside a line continuation"


_VAR = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def parse_dockerfile(text: str) -> list[Stage]:
    """Stages in order. Global ``ARG`` defaults (before the first FROM) are substituted
    into FROM lines, which is the only place Docker expands them."""
    assert not re.match(r"#\s*escape\s*=", text), "custom escape characters are unsupported"
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line, content in logical_lines(text):
        keyword, _, args = content.partition(" ")
        instruction = Instruction(keyword.upper(), args.strip(), line)
        if instruction.keyword == "FROM":
            words = _VAR.sub(lambda m: global_args[m.group(1) or m.group(2)], args).split()
            words = [w for w in words if not w.startswith("--platform")]
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(base=words[0], name=name))
        elif not stages:
            assert instruction.keyword == "ARG", f"line {line}: only ARG may precede FROM"
            key, _, default = instruction.args.partition("=")
            global_args[key] = default
        else:
            stages[-1].instructions.append(instruction)
    return stages


def env_of(stage: Stage) -> dict[str, str]:
    """Merged ``ENV`` of a stage (both ``K=V ...`` and legacy ``K V`` forms)."""
    env: dict[str, str] = {}
    for instruction in stage.all("ENV"):
        tokens = shlex.split(instruction.args)
        if "=" not in tokens[0]:
            env[tokens[0]] = " ".join(tokens[1:])
            continue
        for token in tokens:
            key, _, value = token.partition("=")
            env[key] = value
    return env


def copy_sources(instruction: Instruction) -> tuple[list[str], dict[str, str]]:
    """(sources, ``--flag=value`` options) of a shell-form COPY."""
    words = shlex.split(instruction.args)
    flags = dict(w[2:].partition("=")[::2] for w in words if w.startswith("--"))
    paths = [w for w in words if not w.startswith("--")]
    return paths[:-1], flags


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def final(stages: list[Stage]) -> Stage:
    return stages[-1]


# ----------------------------------------------------------------- parser self-checks


def test_parser_joins_continuations_and_skips_comments() -> None:
    text = (
        "ARG V=3.12\n"
        "FROM python:${V}-slim AS b\n"
        "# a comment\n"
        "RUN a \\\n"
        "  # dropped comment inside a continuation\n"
        "  && b\n"
        "ENV A=1 B='x y'\n"
        "ENV C legacy value\n"
        "FROM python:$V-slim\n"
        "COPY --from=b /opt/venv /opt/venv\n"
    )
    first, second = parse_dockerfile(text)
    assert (first.base, first.name) == ("python:3.12-slim", "b")
    assert first.last("RUN") == Instruction("RUN", "a && b", 4)
    assert env_of(first) == {"A": "1", "B": "x y", "C": "legacy value"}
    assert (second.base, second.name) == ("python:3.12-slim", None)
    assert copy_sources(second.last("COPY")) == (["/opt/venv"], {"from": "b"})


# ----------------------------------------------------------------- stages and base image


_SLIM_PYTHON = re.compile(
    r"^python:(?P<major>\d+)\.(?P<minor>\d+)(?:\.\d+)?-slim(?:-[a-z]+)?(?:@sha256:[0-9a-f]{64})?$"
)


def test_multi_stage_with_the_venv_copied_from_the_builder(stages: list[Stage]) -> None:
    assert len(stages) >= 2
    final = stages[-1]
    earlier = {s.name for s in stages[:-1]}
    copied = [copy_sources(c) for c in final.all("COPY")]
    assert any(flags.get("from") in earlier for _, flags in copied)
    # nothing from the build context lands in the runtime stage directly
    assert all("from" in flags for _, flags in copied)


def test_final_base_is_slim_python_311_or_newer_same_as_builder(stages: list[Stage]) -> None:
    match = _SLIM_PYTHON.match(stages[-1].base)
    assert match, f"final base {stages[-1].base!r} is not python:X.Y-slim"
    assert (int(match["major"]), int(match["minor"])) >= (3, 11)
    # the venv is copied across stages: it only works on the identical interpreter
    assert {s.base for s in stages} == {stages[-1].base}


# ----------------------------------------------------------------- runtime user and env


def _uid(final: Stage) -> int:
    user = final.last("USER").args
    uid, _, gid = user.partition(":")
    assert uid.isdigit(), "USER must be numeric for Kubernetes runAsNonRoot"
    assert not gid or gid.isdigit()
    return int(uid)


def test_final_stage_runs_as_a_numeric_non_root_user(final: Stage) -> None:
    assert _uid(final) > 0
    # every RUN happens before the switch, nothing after it needs root
    assert final.last("RUN").line < final.last("USER").line


def test_image_uid_is_the_one_kubernetes_pods_run_as(final: Stage) -> None:
    k8s = REPO / "deploy" / "k8s"
    deployment = yaml.safe_load((k8s / "deployment.yaml").read_text(encoding="utf-8"))
    cronjob = yaml.safe_load((k8s / "cronjob.yaml").read_text(encoding="utf-8"))
    pods = [
        deployment["spec"]["template"]["spec"],
        cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"],
    ]
    assert {p["securityContext"]["runAsUser"] for p in pods} == {_uid(final)}


def test_runtime_env_is_read_only_root_friendly(final: Stage) -> None:
    env = env_of(final)
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["HOME"] == "/tmp"
    assert env["PATH"].startswith("/opt/venv/bin:")
    assert final.last("WORKDIR").args != "/tmp"


def test_suanli_env_in_the_image_are_valid_settings(stages: list[Stage]) -> None:
    names = {Settings.env_name(f) for f in Settings.__struct_fields__}
    suanli_env = {k: v for s in stages for k, v in env_of(s).items() if k.startswith("SUANLI_")}
    assert set(suanli_env) <= names
    assert load_settings(suanli_env).workers == int(suanli_env["SUANLI_WORKERS"]) >= 1


# ----------------------------------------------------------------- entrypoint, port, health


def test_entrypoint_is_the_suanli_console_script_serving_on_8000(final: Stage) -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (script,) = final.last("ENTRYPOINT").exec_form()
    assert script in pyproject["project"]["scripts"]
    cmd = final.last("CMD").exec_form()
    assert cmd[0] == "serve"
    assert cmd[cmd.index("--host") + 1] == "0.0.0.0"
    assert int(cmd[cmd.index("--port") + 1]) == APP_PORT
    assert final.last("EXPOSE").args.split() == [str(APP_PORT)]


def _healthcheck(final: Stage) -> tuple[dict[str, str], list[str]]:
    match = re.fullmatch(r"((?:--\S+\s+)*)CMD\s+(\[.*\])", final.last("HEALTHCHECK").args)
    assert match, "HEALTHCHECK must be `[--options] CMD [exec form]`"
    options = dict(o[2:].partition("=")[::2] for o in match.group(1).split())
    command = Instruction("CMD", match.group(2), 0).exec_form()
    return options, command


def test_healthcheck_uses_python_urllib_against_healthz(final: Stage) -> None:
    options, command = _healthcheck(final)
    assert command[:2] == ["python", "-c"]
    code = command[2]
    assert "urllib.request" in code
    assert f"http://127.0.0.1:{APP_PORT}/healthz" in code
    assert not {"curl", "wget"} & set(re.findall(r"\w+", " ".join(command)))
    for option in ("interval", "timeout", "start-period", "retries"):
        assert option in options


class _Health(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        self.send_response(self.status if self.path == "/healthz" else 404)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Silence the default stderr access log."""


def _run_healthcheck(code: str, port: int) -> int:
    code = code.replace(f"127.0.0.1:{APP_PORT}", f"127.0.0.1:{port}")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30).returncode


@pytest.mark.parametrize(("status", "healthy"), [(200, True), (503, False)])
def test_healthcheck_command_exit_code_follows_the_http_status(
    final: Stage, status: int, healthy: bool
) -> None:
    """Docker marks the container unhealthy on a non-zero exit: run the exact code."""
    _, command = _healthcheck(final)
    handler = type("Handler", (_Health,), {"status": status})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        returncode = _run_healthcheck(command[2], server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
    assert (returncode == 0) is healthy


def test_healthcheck_fails_when_nothing_listens(final: Stage) -> None:
    _, command = _healthcheck(final)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    port = server.server_address[1]
    server.server_close()  # the port is now closed: connection refused
    assert _run_healthcheck(command[2], port) != 0


# ----------------------------------------------------------------- dependencies


def test_only_runtime_dependencies_are_installed(stages: list[Stage]) -> None:
    installs = [
        part.strip()
        for stage in stages
        for run in stage.all("RUN")
        for part in run.args.split("&&")
        if "pip install" in part
    ]
    package = 'pip install -c constraints.txt ".${CLOUD_EXTRAS:+[${CLOUD_EXTRAS}]}"'
    assert package in installs, installs
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    dev = {re.split(r"[<>=!~\[; ]", r)[0] for r in extras["dev"]}
    assert "pytest" in dev
    # the default extras are the cloud SDKs only (the CronJob needs them to fetch)
    builder = next(stage for stage in stages if any(r.args for r in stage.all("RUN")))
    defaults = dict(arg.args.partition("=")[::2] for arg in builder.all("ARG"))
    assert defaults["CLOUD_EXTRAS"] == "all-clouds"
    assert extras["all-clouds"] == ["suanli[alibaba,tencent,huawei,volcengine]"]
    for cloud in ("alibaba", "tencent", "huawei", "volcengine"):
        assert not dev & {re.split(r"[<>=!~\[; ]", r)[0] for r in extras[cloud]}
    for args in installs:
        assert "dev" not in re.findall(r"\[([^\]]*)\]", args), f"dev extra installed: {args}"
        assert not re.search(r"(^|\s)(-e|--editable)(\s|$)", args), f"editable: {args}"
        assert not dev & set(args.split()), f"dev tool installed: {args}"


def test_package_data_globs_cover_every_data_file_shipped_in_the_packages() -> None:
    """Catalogs are baked in only if setuptools packages them: every non-Python file
    under service/ and plugins/ must match a package-data glob of pyproject.toml."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["*"]
    data = [
        p
        for root in ("service", "plugins")
        for p in (REPO / root).rglob("*")
        if p.is_file() and p.suffix not in {".py", ".pyc", ".pyi"} and "__pycache__" not in p.parts
    ]
    missing = [str(p.relative_to(REPO)) for p in data if not any(fnmatch(p.name, g) for g in globs)]
    assert not missing, f"not packaged, so not in the image: {missing}"


# ----------------------------------------------------------------- build context


def _pattern(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as a regex (Go filepath.Match plus ``**``)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.index("]", i)
            out.append(pattern[i : end + 1])
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("^" + "".join(out) + "$")


def _dockerignore() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for raw in DOCKERIGNORE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        rules.append((negate, _pattern(line.lstrip("!").strip("/"))))
    return rules


def excluded(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker semantics: the last matching rule wins, and a rule matching a parent
    directory applies to everything below it."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]
    result = False
    for negate, regex in rules:
        if any(regex.match(p) for p in prefixes):
            result = not negate
    return result


def test_dockerignore_matcher_semantics() -> None:
    rules = [(False, _pattern("*")), (True, _pattern("src")), (False, _pattern("**/*.pyc"))]
    assert excluded("notes.txt", rules)
    assert not excluded("src/a.py", rules)
    assert excluded("src/pkg/a.pyc", rules)


def test_build_context_keeps_secrets_and_dev_files_out() -> None:
    rules = _dockerignore()
    for path in (".git/config", ".venv/bin/python", "tests/conftest.py", ".env", "deploy/k8s"):
        assert excluded(path, rules), path
    kept = (
        "pyproject.toml",
        "service/runtime/settings.py",
        "service/catalog/data/accelerators.json",
    )
    for path in kept:
        assert not excluded(path, rules), path
    assert excluded("service/__pycache__/settings.cpython-312.pyc", rules)


def test_every_copy_source_exists_and_is_in_the_build_context(stages: list[Stage]) -> None:
    rules = _dockerignore()
    sources: list[str] = []
    for stage in stages:
        for copy in stage.all("COPY"):
            paths, flags = copy_sources(copy)
            if "from" not in flags:  # from the build context, not from another stage
                sources.extend(paths)
    assert {"pyproject.toml", "service", "plugins"} <= set(sources)
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["readme"] in sources  # setuptools reads it at build time
    for src in sources:
        assert (REPO / src).exists(), f"COPY {src}: missing from the repository"
        assert not excluded(src, rules), f"COPY {src}: excluded by .dockerignore"
