"""Offline validation of every YAML file under ``deploy/``.

There is no cluster, Docker daemon or ``kubectl`` here, so these tests check what a
cluster would otherwise reject or silently get wrong: kinds and apiVersions, probes on
the right paths and ports, selectors that really match the pods, security contexts that
pass the "restricted" Pod Security Standard, and, most of all, that every ``SUANLI_*``
variable the deployment sets is a real :class:`service.runtime.settings.Settings` field with a
value ``load_settings`` accepts. A renamed setting therefore breaks a test, not a
production rollout.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.runtime.settings import Settings, SettingsError, load_settings

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE = DEPLOY / "compose.yaml"
PROMETHEUS = DEPLOY / "prometheus.yml"

APP_PORT = 8000
REDIS_PORT = 6379

Doc = dict[str, Any]

# The stable (GA) apiVersion of every kind the manifests may use. An unknown kind fails
# the test on purpose: adding one means deciding its apiVersion here too.
API_VERSIONS: Mapping[str, str] = {
    "Namespace": "v1",
    "ServiceAccount": "v1",
    "ConfigMap": "v1",
    "Secret": "v1",
    "Service": "v1",
    "Deployment": "apps/v1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
    "PodDisruptionBudget": "policy/v1",
    "NetworkPolicy": "networking.k8s.io/v1",
    "CronJob": "batch/v1",
}
REQUIRED_KINDS = frozenset(
    {
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "ConfigMap",
        "Secret",
        "NetworkPolicy",
        "CronJob",
    }
)

SETTINGS_ENV = frozenset(Settings.env_name(field) for field in Settings.__struct_fields__)
SECRET_ENV = frozenset({"SUANLI_API_KEY", "SUANLI_REDIS_URL"})
# Read by the cloud SDKs themselves (the price-refresh job), not by Settings.
CLOUD_SDK_ENV = frozenset(
    {
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
        "TENCENTCLOUD_SECRET_ID",
        "TENCENTCLOUD_SECRET_KEY",
        "HUAWEICLOUD_SDK_AK",
        "HUAWEICLOUD_SDK_SK",
        "VOLCENGINE_ACCESS_KEY",
        "VOLCENGINE_SECRET_KEY",
    }
)
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
SUANLI_NAME = re.compile(r"\bSUANLI_[A-Z0-9_]+\b")


# ----------------------------------------------------------------- loading helpers


def _mapping(value: object, where: str) -> Doc:
    assert isinstance(value, dict), f"{where}: expected a mapping, got {type(value).__name__}"
    return value


def _load(path: Path) -> list[Doc]:
    text = path.read_text(encoding="utf-8")
    return [
        _mapping(doc, f"{path.name} document {i}")
        for i, doc in enumerate(yaml.safe_load_all(text))
        if doc is not None
    ]


def _yaml_files() -> list[Path]:
    return sorted({*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")})


def _manifest_files() -> list[Path]:
    return sorted(p for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


@pytest.fixture(scope="module")
def docs() -> list[Doc]:
    """Every Kubernetes object in deploy/k8s (kustomization.yaml excluded)."""
    return [doc for path in _manifest_files() for doc in _load(path)]


@pytest.fixture(scope="module")
def compose() -> Doc:
    (doc,) = _load(COMPOSE)
    return doc


def _of_kind(docs: list[Doc], kind: str) -> list[Doc]:
    return [d for d in docs if d["kind"] == kind]


def _named(docs: list[Doc], kind: str, name: str) -> Doc:
    found = [d for d in _of_kind(docs, kind) if d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected exactly one {kind}/{name}, found {len(found)}"
    return found[0]


def _app_deployment(docs: list[Doc]) -> Doc:
    return _named(docs, "Deployment", "suanli")


def _app_container(docs: list[Doc]) -> Doc:
    (container,) = [
        c
        for c in _app_deployment(docs)["spec"]["template"]["spec"]["containers"]
        if c["name"] == "suanli"
    ]
    return _mapping(container, "suanli container")


def _pod_templates(docs: list[Doc]) -> Iterator[tuple[str, Doc]]:
    """(``kind/name``, pod template) for every workload that creates pods."""
    for doc in docs:
        where = f"{doc['kind']}/{doc['metadata']['name']}"
        if doc["kind"] == "Deployment":
            yield where, doc["spec"]["template"]
        elif doc["kind"] == "CronJob":
            yield where, doc["spec"]["jobTemplate"]["spec"]["template"]


def _selects(match_labels: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in match_labels.items())


def _container_port(container: Doc, port: int | str) -> int:
    """Resolve a probe/Service port (a number or a named container port) to a number."""
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in container["ports"] if p.get("name") == port]
    assert isinstance(number, int)
    return number


_CPU = re.compile(r"^(\d+(?:\.\d+)?)(m?)$")
_MEMORY = re.compile(r"^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$")
_MEMORY_UNITS = {
    None: 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}


def _cpu_cores(quantity: object) -> float:
    match = _CPU.match(str(quantity))
    assert match, f"not a CPU quantity: {quantity!r}"
    value = float(match.group(1))
    return value / 1000 if match.group(2) else value


def _memory_bytes(quantity: object) -> int:
    match = _MEMORY.match(str(quantity))
    assert match, f"not a memory quantity: {quantity!r}"
    return int(match.group(1)) * _MEMORY_UNITS[match.group(2)]


_COMPOSE_VAR = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::?-(?P<default>[^}]*))?\}")


def _compose_value(raw: object) -> str:
    """What compose passes when the shell exports nothing: ``${X:-d}`` -> ``d``."""
    return _COMPOSE_VAR.sub(lambda m: m.group("default") or "", str(raw))


def _compose_environment(service: Doc) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): _compose_value(v) for k, v in _mapping(env, "environment").items()}


# ----------------------------------------------------------------- every file


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_yaml_file_parses_into_mappings(path: Path) -> None:
    assert _load(path), f"{path} holds no YAML document"


def test_expected_deploy_files_exist() -> None:
    expected = {"Dockerfile", "compose.yaml", "prometheus.yml", "README.md", "k8s"}
    assert expected <= {p.name for p in DEPLOY.iterdir()}


def test_kinds_present_with_their_stable_api_versions(docs: list[Doc]) -> None:
    for doc in docs:
        kind = doc["kind"]
        assert kind in API_VERSIONS, f"unexpected kind {kind}"
        assert doc["apiVersion"] == API_VERSIONS[kind], f"{kind} must use {API_VERSIONS[kind]}"
    assert {d["kind"] for d in docs} >= REQUIRED_KINDS


def test_object_names_are_unique_dns_labels_without_hardcoded_namespace(
    docs: list[Doc],
) -> None:
    keys = [(d["kind"], d["metadata"]["name"]) for d in docs]
    assert len(keys) == len(set(keys)), "duplicate kind/name"
    for kind, name in keys:
        assert DNS1123_LABEL.match(name), f"{kind}/{name} is not a DNS-1123 label"
    # kustomize sets the namespace once; a hard-coded one would fight it.
    assert all("namespace" not in d["metadata"] for d in docs)


def test_kustomization_lists_exactly_the_manifest_files(docs: list[Doc]) -> None:
    (kustomization,) = _load(K8S / "kustomization.yaml")
    assert kustomization["kind"] == "Kustomization"
    assert kustomization["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    resources = kustomization["resources"]
    assert len(resources) == len(set(resources))
    assert set(resources) == {p.name for p in _manifest_files()}
    (namespace,) = _of_kind(docs, "Namespace")
    assert kustomization["namespace"] == namespace["metadata"]["name"]
    # the image override must name the image the workloads actually use
    images = {i["name"] for i in kustomization["images"]}
    used = {
        c["image"].split(":")[0]
        for _, template in _pod_templates(docs)
        for c in template["spec"]["containers"]
        if c["name"] != "redis"
    }
    assert used == images == {"suanli"}


# ----------------------------------------------------------------- deployment, service


def test_deployment_has_three_replicas_and_a_selector_matching_its_pods(
    docs: list[Doc],
) -> None:
    deployment = _app_deployment(docs)
    assert deployment["spec"]["replicas"] == 3
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector
    assert _selects(selector, deployment["spec"]["template"]["metadata"]["labels"])
    rolling = deployment["spec"]["strategy"]["rollingUpdate"]
    assert rolling["maxUnavailable"] == 0


def test_probes_hit_readyz_and_healthz_on_the_container_port(docs: list[Doc]) -> None:
    container = _app_container(docs)
    probes = {
        kind: container[kind]["httpGet"]
        for kind in ("readinessProbe", "livenessProbe", "startupProbe")
    }
    assert probes["readinessProbe"]["path"] == "/readyz"
    assert probes["livenessProbe"]["path"] == "/healthz"
    assert probes["startupProbe"]["path"] in {"/healthz", "/readyz"}
    for probe in probes.values():
        assert _container_port(container, probe["port"]) == APP_PORT
    # the startup probe must give start-up time before liveness may kill the pod
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 30


def test_container_port_service_target_port_and_server_port_agree(docs: list[Doc]) -> None:
    container = _app_container(docs)
    assert [p["containerPort"] for p in container["ports"]] == [APP_PORT]
    args = container["args"]
    assert args[0] == "serve"
    assert int(args[args.index("--port") + 1]) == APP_PORT
    assert args[args.index("--host") + 1] == "0.0.0.0"

    service = _named(docs, "Service", "suanli")
    assert service["spec"]["type"] == "ClusterIP"
    (port,) = service["spec"]["ports"]
    assert port["port"] == 80
    assert _container_port(container, port["targetPort"]) == APP_PORT


def test_service_selects_api_pods_only(docs: list[Doc]) -> None:
    """The Service must route to the API pods and never to price-refresh job pods."""
    selector = _named(docs, "Service", "suanli")["spec"]["selector"]
    pods = dict(_pod_templates(docs))
    assert _selects(selector, pods["Deployment/suanli"]["metadata"]["labels"])
    assert not _selects(selector, pods["CronJob/suanli-prices-refresh"]["metadata"]["labels"])
    assert not _selects(selector, pods["Deployment/redis"]["metadata"]["labels"])


def test_hpa_scales_the_deployment_on_cpu_70_percent(docs: list[Doc]) -> None:
    (hpa,) = _of_kind(docs, "HorizontalPodAutoscaler")
    deployment = _app_deployment(docs)
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == (
        deployment["apiVersion"],
        "Deployment",
        deployment["metadata"]["name"],
    )
    (metric,) = hpa["spec"]["metrics"]
    assert metric["type"] == "Resource"
    assert metric["resource"]["name"] == "cpu"
    assert metric["resource"]["target"] == {"type": "Utilization", "averageUtilization": 70}
    low, high = hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]
    assert 2 <= low <= deployment["spec"]["replicas"] <= high
    # utilization is relative to the request: without a CPU request the HPA cannot work
    assert _cpu_cores(_app_container(docs)["resources"]["requests"]["cpu"]) > 0


def test_pdb_selects_the_deployment_pods_and_allows_one_eviction(docs: list[Doc]) -> None:
    (pdb,) = _of_kind(docs, "PodDisruptionBudget")
    deployment = _app_deployment(docs)
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    spec = pdb["spec"]
    assert ("minAvailable" in spec) != ("maxUnavailable" in spec)
    if "maxUnavailable" in spec:
        assert spec["maxUnavailable"] == 1
    else:
        # a minAvailable equal to the replica count would block every node drain
        assert spec["minAvailable"] == 1 < deployment["spec"]["replicas"]


def test_topology_spread_uses_the_deployment_selector(docs: list[Doc]) -> None:
    spec = _app_deployment(docs)["spec"]
    constraints = spec["template"]["spec"]["topologySpreadConstraints"]
    keys = {c["topologyKey"] for c in constraints}
    assert keys == {"topology.kubernetes.io/zone", "kubernetes.io/hostname"}
    for c in constraints:
        assert c["labelSelector"]["matchLabels"] == spec["selector"]["matchLabels"]


# ----------------------------------------------------------------- pods: security, resources


def test_every_pod_is_non_root_read_only_and_drops_all_capabilities(docs: list[Doc]) -> None:
    templates = list(_pod_templates(docs))
    assert {where for where, _ in templates} >= {
        "Deployment/suanli",
        "CronJob/suanli-prices-refresh",
    }
    for where, template in templates:
        pod = template["spec"]
        assert pod["automountServiceAccountToken"] is False, where
        context = pod["securityContext"]
        assert context["runAsNonRoot"] is True, where
        assert isinstance(context["runAsUser"], int), where
        assert context["runAsUser"] > 0, where
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}, where
        for container in pod["containers"]:
            sc = container["securityContext"]
            name = f"{where}/{container['name']}"
            assert sc["runAsNonRoot"] is True, name
            assert sc["allowPrivilegeEscalation"] is False, name
            assert sc["readOnlyRootFilesystem"] is True, name
            assert sc["capabilities"]["drop"] == ["ALL"], name
            assert "add" not in sc["capabilities"], name


def test_every_container_has_requests_not_above_limits(docs: list[Doc]) -> None:
    for where, template in _pod_templates(docs):
        for container in template["spec"]["containers"]:
            res = container["resources"]
            name = f"{where}/{container['name']}"
            assert _cpu_cores(res["requests"]["cpu"]) <= _cpu_cores(res["limits"]["cpu"]), name
            requests, limits = res["requests"]["memory"], res["limits"]["memory"]
            assert _memory_bytes(requests) <= _memory_bytes(limits), name


def test_suanli_containers_get_a_writable_tmp_from_an_empty_dir(docs: list[Doc]) -> None:
    """Read-only root: /tmp (HOME in the image) is the one writable path."""
    for where, template in _pod_templates(docs):
        pod = template["spec"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for container in pod["containers"]:
            if not container["image"].startswith("suanli"):
                continue
            (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
            assert "emptyDir" in volumes[mount["name"]], where


def test_workers_per_pod_equal_the_cpu_limit(docs: list[Doc]) -> None:
    """One granian worker per core of the container's CPU limit."""
    config = _named(docs, "ConfigMap", "suanli-config")["data"]
    limit = _cpu_cores(_app_container(docs)["resources"]["limits"]["cpu"])
    assert int(config["SUANLI_WORKERS"]) == math.ceil(limit)


def test_every_env_from_reference_and_service_account_exists(docs: list[Doc]) -> None:
    config_maps = {d["metadata"]["name"] for d in _of_kind(docs, "ConfigMap")}
    secrets = {d["metadata"]["name"] for d in _of_kind(docs, "Secret")}
    accounts = {d["metadata"]["name"] for d in _of_kind(docs, "ServiceAccount")}
    for where, template in _pod_templates(docs):
        pod = template["spec"]
        if "serviceAccountName" in pod:
            assert pod["serviceAccountName"] in accounts, where
        for container in pod["containers"]:
            for source in container.get("envFrom", []):
                if "configMapRef" in source:
                    assert source["configMapRef"]["name"] in config_maps, where
                if "secretRef" in source:
                    ref = source["secretRef"]
                    assert ref.get("optional") is True or ref["name"] in secrets, where


# ----------------------------------------------------------------- settings: names and values


REAL_KEY = {"SUANLI_API_KEY": "0f3c9a7d5e1b2c4a6f8e0d2b4c6a8e1f3d5b7c9e"}
"""What an operator puts in place of the Secret's placeholder."""


def _k8s_settings(docs: list[Doc]) -> dict[str, str]:
    config = _named(docs, "ConfigMap", "suanli-config")["data"]
    secret = _named(docs, "Secret", "suanli-secrets")["stringData"]
    return {**config, **secret}


def test_every_suanli_name_anywhere_in_deploy_is_a_settings_field() -> None:
    """Scans every file (YAML, Dockerfile, README), comments included: a renamed setting
    must not survive anywhere in the deployment docs either."""
    used: dict[str, set[str]] = {}
    for path in sorted(p for p in DEPLOY.rglob("*") if p.is_file()):
        for name in SUANLI_NAME.findall(path.read_text(encoding="utf-8")):
            used.setdefault(name, set()).add(str(path.relative_to(DEPLOY)))
    assert used, "expected SUANLI_* settings in deploy/"
    unknown = {name: files for name, files in used.items() if name not in SETTINGS_ENV}
    assert not unknown, f"not Settings fields: {unknown}"


def test_env_keys_in_config_map_secret_and_compose_are_known(docs: list[Doc], compose: Doc) -> None:
    keys = set(_k8s_settings(docs))
    for _, template in _pod_templates(docs):
        for container in template["spec"]["containers"]:
            keys |= {e["name"] for e in container.get("env", [])}
    keys |= set(_compose_environment(compose["services"]["suanli"]))
    assert keys <= SETTINGS_ENV | CLOUD_SDK_ENV, keys - SETTINGS_ENV - CLOUD_SDK_ENV


def test_kubernetes_settings_load_and_have_the_intended_values(docs: list[Doc]) -> None:
    # The shipped Secret is a placeholder, which start-up refuses (next test); with a
    # real key in its place everything else loads as intended.
    settings = load_settings({**_k8s_settings(docs), **REAL_KEY})
    assert settings.workers == 2
    assert settings.redis_url == "redis://redis:6379/0"
    assert settings.live_prices is False  # the CronJob refreshes, not every pod
    assert settings.refresh_interval_s == 1.0
    assert settings.rate_limit_per_minute == 600
    assert settings.log_level == "INFO"


def test_start_up_refuses_the_placeholder_admin_key(docs: list[Doc]) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(_k8s_settings(docs))
    assert str(info.value).startswith("SUANLI_API_KEY: refusing a placeholder")
    assert "CHANGE-ME" not in str(info.value)  # the key itself is never echoed


def test_secrets_live_in_the_secret_only_and_are_marked_placeholders(docs: list[Doc]) -> None:
    config = _named(docs, "ConfigMap", "suanli-config")["data"]
    secret = _named(docs, "Secret", "suanli-secrets")
    assert not SECRET_ENV & set(config)
    assert set(secret["stringData"]) == SECRET_ENV
    assert "data" not in secret
    assert "PLACEHOLDER" in secret["stringData"]["SUANLI_API_KEY"]
    assert "PLACEHOLDER" in (K8S / "secret.yaml").read_text(encoding="utf-8").splitlines()[0]


# ----------------------------------------------------------------- network policy


def _ports(rules: list[Doc]) -> set[tuple[str, int]]:
    return {(p.get("protocol", "TCP"), p["port"]) for rule in rules for p in rule["ports"]}


def test_network_policy_opens_8000_in_and_dns_redis_https_out(docs: list[Doc]) -> None:
    policy = _named(docs, "NetworkPolicy", "suanli")
    spec = policy["spec"]
    pods = dict(_pod_templates(docs))
    for workload in ("Deployment/suanli", "CronJob/suanli-prices-refresh"):
        labels = pods[workload]["metadata"]["labels"]
        assert _selects(spec["podSelector"]["matchLabels"], labels), workload
    assert set(spec["policyTypes"]) == {"Ingress", "Egress"}
    assert _ports(spec["ingress"]) == {("TCP", APP_PORT)}
    assert _ports(spec["egress"]) == {
        ("UDP", 53),
        ("TCP", 53),
        ("TCP", REDIS_PORT),
        ("TCP", 443),
    }


def test_dev_redis_is_reachable_from_suanli_pods_only(docs: list[Doc]) -> None:
    spec = _named(docs, "NetworkPolicy", "redis")["spec"]
    redis_pods = dict(_pod_templates(docs))["Deployment/redis"]["metadata"]["labels"]
    assert _selects(spec["podSelector"]["matchLabels"], redis_pods)
    (rule,) = spec["ingress"]
    (source,) = rule["from"]
    assert source["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "suanli"}
    assert _ports([rule]) == {("TCP", REDIS_PORT)}


# ----------------------------------------------------------------- redis, cronjob


def test_dev_redis_matches_the_secret_url_and_keeps_no_data(docs: list[Doc]) -> None:
    service = _named(docs, "Service", "redis")
    deployment = _named(docs, "Deployment", "redis")
    assert deployment["spec"]["replicas"] == 1
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    (port,) = service["spec"]["ports"]
    assert port["port"] == REDIS_PORT
    assert _container_port(container, port["targetPort"]) == REDIS_PORT
    assert _selects(
        service["spec"]["selector"], deployment["spec"]["template"]["metadata"]["labels"]
    )
    url = _k8s_settings(docs)["SUANLI_REDIS_URL"]
    assert url == f"redis://{service['metadata']['name']}:{REDIS_PORT}/0"
    args = container["args"]
    assert args[args.index("--save") + 1] == ""
    assert args[args.index("--appendonly") + 1] == "no"
    assert args[args.index("--maxmemory-policy") + 1] == "volatile-lru"
    assert container["readinessProbe"]["exec"]["command"] == ["redis-cli", "ping"]


def _every_n_minutes(schedule: str) -> int:
    minute, hour, day, month, weekday = schedule.split()
    assert (hour, day, month, weekday) == ("*", "*", "*", "*")
    match = re.fullmatch(r"\*/(\d+)", minute)
    assert match, f"expected */N minutes, got {minute!r}"
    return int(match.group(1))


def test_cronjob_refreshes_prices_every_30_minutes_one_at_a_time(docs: list[Doc]) -> None:
    (cron,) = _of_kind(docs, "CronJob")
    assert _every_n_minutes(cron["spec"]["schedule"]) == 30
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["restartPolicy"] in {"Never", "OnFailure"}
    (container,) = pod["containers"]
    assert [*container["command"], *container["args"]] == ["suanli", "prices", "refresh"]
    assert container["image"] == _app_container(docs)["image"]
    refs = {
        (kind, ref["name"], ref.get("optional", False))
        for source in container["envFrom"]
        for kind, ref in source.items()
    }
    assert refs == {
        ("configMapRef", "suanli-config", False),
        ("secretRef", "suanli-secrets", False),  # SUANLI_REDIS_URL: where to publish
        ("secretRef", "suanli-cloud-credentials", True),
    }


def test_live_prices_stay_fresh_between_cronjob_runs(docs: list[Doc]) -> None:
    (cron,) = _of_kind(docs, "CronJob")
    interval_s = _every_n_minutes(cron["spec"]["schedule"]) * 60
    settings = load_settings({**_k8s_settings(docs), **REAL_KEY})
    # a single late or failed run must not mark prices stale
    assert settings.live_price_ttl_s >= 2 * interval_s


# ----------------------------------------------------------------- compose


def test_compose_runs_two_replicas_behind_a_healthy_redis(compose: Doc) -> None:
    services = compose["services"]
    app, redis = services["suanli"], services["redis"]
    assert app["deploy"]["replicas"] == 2
    assert app["depends_on"] == {"redis": {"condition": "service_healthy"}}
    assert redis["image"].startswith("redis:7")
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    command = redis["command"]
    assert command[0] == "redis-server"
    assert command[command.index("--save") + 1] == ""
    assert command[command.index("--appendonly") + 1] == "no"
    # one host port per replica: "8000-8001:8000"
    (ports,) = app["ports"]
    host, container = str(ports).rsplit(":", 1)
    first, last = (int(p) for p in host.split("-"))
    assert last - first + 1 == app["deploy"]["replicas"]
    assert int(container) == APP_PORT


def test_compose_builds_the_deploy_dockerfile_from_the_repo_root(compose: Doc) -> None:
    build = compose["services"]["suanli"]["build"]
    context = (COMPOSE.parent / build["context"]).resolve()
    assert context == REPO
    assert (context / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"


def test_compose_settings_load_and_point_at_the_redis_service(compose: Doc) -> None:
    app = compose["services"]["suanli"]
    env = _compose_environment(app)
    settings = load_settings(env)
    assert settings.redis_url == f"redis://redis:{REDIS_PORT}/0"
    assert settings.api_key is None  # admin routes off unless the operator exports a key
    assert settings.workers == math.ceil(float(app["deploy"]["resources"]["limits"]["cpus"]))


def test_compose_container_is_read_only_like_the_pod(compose: Doc) -> None:
    app = compose["services"]["suanli"]
    assert app["read_only"] is True
    assert app["tmpfs"] == ["/tmp"]
    assert app["cap_drop"] == ["ALL"]


def test_prometheus_is_optional_and_scrapes_every_replica(compose: Doc) -> None:
    prometheus = compose["services"]["prometheus"]
    assert prometheus["profiles"] == ["monitoring"]
    mounts = {}
    for volume in prometheus["volumes"]:
        source, target, mode = volume.split(":")
        assert mode == "ro"
        mounts[target] = (COMPOSE.parent / source).resolve()
    assert mounts["/etc/prometheus/prometheus.yml"] == PROMETHEUS
    (config,) = _load(PROMETHEUS)
    # every rule file the config loads is mounted from deploy/monitoring/
    for rule_file in config.get("rule_files", []):
        assert mounts[rule_file].is_file(), f"{rule_file} is not mounted from the repository"
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "suanli"]
    assert job["metrics_path"] == "/metrics"
    (discovery,) = job["dns_sd_configs"]
    assert discovery["names"] == ["suanli"]  # the compose service name: one A per replica
    assert discovery["port"] == APP_PORT
