"""Deployment files checked offline (no Docker engine or Kubernetes cluster runs on these machines):

- deploy/k8s/*.yaml against the Kubernetes OpenAPI schemas bundled with kubernetes-validate (strict: an unknown
  field is an error), for the oldest and newest API versions we claim; plus what a schema cannot see: the
  Service and the HPA point at the Deployment's pods, the probes hit the service's real routes, every container
  has requests and limits, the init container rebuilds the service's inputs, nothing runs as root;
- `kubectl kustomize` renders the folder when kubectl is installed (the client needs no cluster for that);
- the Dockerfile's structure: multi-stage, uv-installed from the lock file, a non-root user, a HEALTHCHECK on
  /healthz, and every path it copies exists in the repository.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
K8S = REPO / "deploy" / "k8s"
K8S_VERSIONS = ("1.31.0", "1.35.0")


def _docs() -> list[dict]:
    out = []
    for f in sorted(K8S.glob("*.yaml")):
        if f.name == "kustomization.yaml":
            continue
        out += [d for d in yaml.safe_load_all(f.read_text()) if d]
    return out


def _kind(kind: str) -> dict:
    (doc,) = [d for d in _docs() if d["kind"] == kind]
    return doc


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_manifests_validate_strictly_against_the_kubernetes_schema(version):
    import kubernetes_validate as kv  # the dev group installs it: never skipped

    docs = _docs()
    assert {d["kind"] for d in docs} == {
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PersistentVolumeClaim",
    }
    for d in docs:
        kv.validate(d, version, strict=True)  # raises ValidationError with the path of the bad field


def test_the_schema_check_can_fail():
    import kubernetes_validate as kv  # the dev group installs it: never skipped

    bad = _kind("Deployment")
    bad = {**bad, "spec": {**bad["spec"], "replicas": "one", "replicaz": 2}}
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, K8S_VERSIONS[0], strict=True)


def test_service_and_autoscaler_reach_the_deployments_pods():
    dep, svc, hpa = _kind("Deployment"), _kind("Service"), _kind("HorizontalPodAutoscaler")
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert svc["spec"]["selector"].items() <= labels.items()
    (container,) = dep["spec"]["template"]["spec"]["containers"]
    port_names = {p["name"] for p in container["ports"]}
    assert all(p["targetPort"] in port_names for p in svc["spec"]["ports"])
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", dep["metadata"]["name"])
    assert hpa["spec"]["minReplicas"] >= 1 and hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]


def test_probes_use_the_services_routes_and_every_container_is_bounded():
    from finrag.serve.app import create_app

    routes = {r.path for r in create_app(background_load=False).routes}
    pod = _kind("Deployment")["spec"]["template"]["spec"]
    (serve,) = pod["containers"]
    assert serve["readinessProbe"]["httpGet"]["path"] == "/readyz" and "/readyz" in routes
    assert serve["livenessProbe"]["httpGet"]["path"] == "/healthz" and "/healthz" in routes
    assert serve["command"][:2] == ["finrag", "serve"] and "0.0.0.0" in serve["command"]
    for c in pod["containers"] + pod["initContainers"]:
        for part in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(c["resources"][part]), (c["name"], part)
        assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0


def test_the_init_container_rebuilds_the_services_inputs_with_the_stage_scripts():
    pod = _kind("Deployment")["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    script = " ".join(init["args"])
    for stage in ("010_ingest", "020_questions", "030_chunk"):
        assert f"scripts/{stage}.py" in script and (REPO / "scripts" / f"{stage}.py").exists()
    assert "--chunker page" in script  # the selected setup's chunks, which the service searches
    mounts = {m["name"]: m["mountPath"] for m in init["volumeMounts"]}
    (serve,) = pod["containers"]
    assert mounts["data"] == {m["name"]: m["mountPath"] for m in serve["volumeMounts"]}["data"] == "/app/data"
    mirror = next(e["value"] for e in init["env"] if e["name"] == "FINRAG_MIRROR")
    assert mounts["mirror"] == mirror


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_renders_the_kustomization_offline():
    done = subprocess.run(["kubectl", "kustomize", str(K8S)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(done.stdout) if d]
    assert sorted(kinds) == ["Deployment", "HorizontalPodAutoscaler", "PersistentVolumeClaim", "Service"]


def test_dockerfile_is_multi_stage_non_root_uv_installed_with_a_healthcheck():
    text = (REPO / "Dockerfile").read_text()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    stages = [ln for ln in lines if ln.startswith("FROM ")]
    assert len(stages) >= 2 and " AS build" in stages[0]
    assert re.search(r"uv sync --frozen --no-dev", text)
    users = [ln.split()[1] for ln in lines if ln.startswith("USER ")]
    assert users and not users[-1].startswith(("0", "root"))
    assert "HEALTHCHECK" in text and "/healthz" in text
    assert lines[-1].startswith("CMD ") and "serve" in lines[-1]
    for ln in lines:  # every path copied from the build context is in the repository
        if ln.startswith("COPY ") and "--from=" not in ln:
            sources = [a for a in ln.split()[1:-1] if not a.startswith("--")]
            for src in sources:
                assert (REPO / src).exists(), f"Dockerfile copies {src}, which is not in the repository"
    ignored = (REPO / ".dockerignore").read_text().split()
    assert ".venv" in ignored and "data/*" in ignored
