"""deploy/: the Zero to JupyterHub values and the TLJH script parse, and agree with each other,
with binder/ and with docs/class.md (the measured figures the settings come from).

helm is not installable from the registries this project uses, so the chart itself is not run
here; docs/class.md records the one-off check of these values against the chart's own
values.schema.yaml.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
Z2JH = ROOT / "deploy" / "z2jh"
TLJH = ROOT / "deploy" / "tljh" / "install.sh"
DOC = ROOT / "docs" / "class.md"


def load(name: str):
    docs = list(yaml.safe_load_all((Z2JH / name).read_text()))
    return docs[0] if len(docs) == 1 else docs


def quantity(text) -> float:
    """A Kubernetes quantity (1G, 512Mi, 0.1, 200m) as a number of units."""
    units = {"": 1, "m": 1e-3, "K": 1e3, "M": 1e6, "G": 1e9, "Ki": 2**10, "Mi": 2**20,
             "Gi": 2**30}
    number, unit = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(text)).groups()
    return float(number) * units[unit]


def test_every_yaml_file_parses():
    files = sorted(Z2JH.glob("*.yaml"))
    assert {f.name for f in files} >= {"config.yaml", "size-30.yaml", "size-300.yaml",
                                       "class-cache.yaml"}
    for f in files:
        assert all(isinstance(d, dict) for d in yaml.safe_load_all(f.read_text())), f.name


def test_guarantees_below_limits_and_threads_match_the_cpu_limit():
    user = load("config.yaml")["singleuser"]
    assert 0 < quantity(user["memory"]["guarantee"]) <= quantity(user["memory"]["limit"])
    assert 0 < quantity(user["cpu"]["guarantee"]) <= quantity(user["cpu"]["limit"])
    assert int(user["extraEnv"]["MLCLAB_NUM_THREADS"]) == quantity(user["cpu"]["limit"])


def test_shared_cache_is_the_read_only_volume_the_warm_job_fills():
    user = load("config.yaml")["singleuser"]
    shared = user["extraEnv"]["MLCLAB_SHARED_CACHE_DIR"]
    (mount,) = [m for m in user["storage"]["extraVolumeMounts"] if m["mountPath"] == shared]
    assert mount["readOnly"] is True
    (volume,) = [v for v in user["storage"]["extraVolumes"] if v["name"] == mount["name"]]
    claim = volume["persistentVolumeClaim"]
    assert claim["readOnly"] is True
    # The student's own cache is elsewhere, on the home volume.
    assert user["extraEnv"]["MLCLAB_CACHE_DIR"].startswith(user["storage"].get(
        "homeMountPath", "/home/jovyan") + "/")

    pvc, job = load("class-cache.yaml")
    assert pvc["kind"] == "PersistentVolumeClaim" and pvc["metadata"]["name"] == claim["claimName"]
    assert "ReadWriteMany" in pvc["spec"]["accessModes"]
    spec = job["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert container["image"] == f"{user['image']['name']}:{user['image']['tag']}"
    shell, flag, script = container["command"]
    assert (shell, flag) == ("sh", "-c")
    # warm-cache LESSON.ipynb ... --to DIR: the lessons of the image, into the volume
    words = script.split()
    assert words[:4] == ["python", "-m", "mlclab.course", "warm-cache"]
    assert all(w.endswith(".ipynb") for w in words[4:words.index("--to")])
    target = words[words.index("--to") + 1]
    (job_mount,) = container["volumeMounts"]
    assert job_mount["mountPath"] == target and not job_mount.get("readOnly")
    (job_volume,) = spec["volumes"]
    assert job_volume["persistentVolumeClaim"]["claimName"] == claim["claimName"]


def test_class_sizes_culling_placeholders_and_prepulling():
    base, small, large = load("config.yaml"), load("size-30.yaml"), load("size-300.yaml")
    assert base["cull"]["enabled"] and base["cull"]["timeout"] > 0
    assert base["scheduling"]["userPlaceholder"]["enabled"]
    assert base["prePuller"]["hook"]["enabled"] and base["prePuller"]["continuous"]["enabled"]
    assert (0 < small["scheduling"]["userPlaceholder"]["replicas"]
            < large["scheduling"]["userPlaceholder"]["replicas"])
    assert large["cull"]["timeout"] <= base["cull"]["timeout"]


def test_docs_quote_the_settings_they_explain():
    text = DOC.read_text(encoding="utf-8")
    user = load("config.yaml")["singleuser"]
    for key in ("guarantee", "limit"):
        assert f"memory.{key}: {user['memory'][key]}" in text
        assert f"cpu.{key}: {user['cpu'][key]}" in text
    for name in ("config.yaml", "size-30.yaml", "size-300.yaml", "class-cache.yaml"):
        assert f"deploy/z2jh/{name}" in text
    assert "deploy/tljh/install.sh" in text and "benchmarks/hub_load.py" in text


def test_tljh_script_is_valid_bash_and_matches_the_kubernetes_limits():
    subprocess.run(["bash", "-n", str(TLJH)], check=True)
    text = TLJH.read_text()
    assert text.startswith("#!/bin/bash") and "set -euo pipefail" in text
    user = load("config.yaml")["singleuser"]
    assert f"MEMORY_LIMIT=${{MEMORY_LIMIT:-{user['memory']['limit']}}}" in text
    assert f"CPU_LIMIT=${{CPU_LIMIT:-{user['cpu']['limit']}}}" in text
    for key in ("limits.memory", "limits.cpu", "services.cull.timeout"):
        assert f"tljh-config set {key}" in text
    assert "binder/requirements.txt" in text and "binder/postBuild" in text
    assert "MLCLAB_SHARED_CACHE_DIR" in text
    assert re.search(r"mlclab\.course warm-cache \"\$SRC\"/lessons/\[0-9\]\*\.ipynb --to", text)
