"""``pip install verikit``: the kit's wheel and sdist, built by the PyPA
``build`` frontend from this checkout exactly as runner images and artifact bundles build
them (:func:`harness.sandbox.images.kit_distributions`), carry everything the kit reads at
run time, and the wheel works with no checkout.

The wheel goes into a fresh virtualenv outside the checkout. Its dependencies are those
of the test environment, made visible to it (a link to each installed distribution,
those of the kit and of its plugins left out, and no ``.pth`` file processed): installing
them from PyPI would take minutes and test pip, not the kit; the kit itself comes only
from the wheel (checked: ``harness`` is imported from the fresh environment and no path
of the checkout is on ``sys.path``). From ``/tmp`` it runs CASP's gold mode on three
casp-sample10 tasks (``TASKS``; that the installed kit runs the verifier and writes the
checkout's records does not depend on how many) with the real Frama-C on the host; the
same command from the checkout,
given the wheel run's result cache, must find every job there (the same job keys, so the
same code and data decided them) and write the same records; both agree with the
committed reference run. A kit installed from a wheel says so in run.json, and asked for
what only a checkout has (the reference runs of an artifact bundle) exits 2 with a
message.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from harness.results import compare_runs, load_records

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "results" / "reproduced" / "casp"
#: Three casp-sample10 tasks whose gold jobs are quick here (about 1 s each with Frama-C).
TASKS = ["02_12", "04_140", "05_125"]

#: The kit's files outside the package that the wheel must carry (paths in the checkout).
KIT_FILES = ["schemas/run.schema.json", "schemas/record.schema.json", "schemas/report.schema.json",
             "schemas/predictions.schema.json", "schemas/toolchain.schema.json", "schemas/generation.schema.json",
             "images/toolchains.json", "images/runner.Containerfile", "images/debian/apt.Containerfile",
             "images/debian/tlaplus.Containerfile",
             "images/ntp4vc-rocq/shim/Stdlib/Reals/Zfloor.v", "flake.nix", "nix/default.nix", "nix/probe.py",
             "results/published/casp.json", "results/published/ntp4vc.json", "scripts/make-base-image.sh"]


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """The kit's sdist and wheel (:func:`harness.sandbox.images.kit_distributions`)."""
    pytest.importorskip("build", reason="the PyPA build frontend (the kit's dev extra)")
    from harness.sandbox import images

    return images.kit_distributions(tmp_path_factory.mktemp("dist"))


@pytest.mark.slow
def test_the_wheel_and_sdist_carry_the_kits_files(dists):
    wheel = set(zipfile.ZipFile(dists["wheel"]).namelist())
    for rel in KIT_FILES:
        assert f"harness/_kit/{rel}" in wheel, rel
        assert zipfile.ZipFile(dists["wheel"]).read(f"harness/_kit/{rel}") == (ROOT / rel).read_bytes(), rel
    shim = {p.relative_to(ROOT).as_posix() for p in (ROOT / "images" / "ntp4vc-rocq" / "shim").rglob("*.v")}
    assert {f"harness/_kit/{s}" for s in shim} <= wheel and len(shim) == 16
    # every file of the package (what the job keys hash: harness/registry.py) and nothing of a checkout only
    package = {p.relative_to(ROOT).as_posix() for p in (ROOT / "harness").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert package - wheel == set()
    assert not [n for n in wheel if "results/reproduced" in n or n.startswith(("tests/", "docs/"))]
    with tarfile.open(dists["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"pyproject.toml", "harness/resources.py", *KIT_FILES} <= names
    assert dists["sha256"] == hashlib.sha256(dists["wheel"].read_bytes()).hexdigest()


def test_the_package_list_is_complete():
    """pyproject.toml lists the packages (``harness._kit`` has no directory to be found):
    every directory of harness/ with an ``__init__.py`` must be in it."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "harness").rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - found == {"harness._kit"}


def _dependency_links(venv: Path) -> None:
    """Make the test environment's installed distributions importable in ``venv`` (a link
    to each entry of its site-packages directories), those of the kit and of its plugins
    and editable installs' hooks left out."""
    target = next((venv / "lib").glob("python3*/site-packages"))
    for site in dict.fromkeys(Path(p) for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()):
        skip = set()
        for dist in importlib.metadata.distributions(path=[str(site)]):
            if dist.metadata["Name"].lower() == "verikit" or any(ep.group.startswith("verikit.")
                                                                 for ep in dist.entry_points):
                skip |= {Path(str(f)).parts[0] for f in dist.files or []}
        for entry in site.iterdir():
            if entry.name in skip or entry.name.startswith("__editable__") or entry.suffix == ".pth" \
                    or (target / entry.name).exists():
                continue
            (target / entry.name).symlink_to(entry)


@pytest.fixture(scope="module")
def wheel_venv(dists, tmp_path_factory):
    """A fresh virtualenv outside the checkout with the kit installed from its wheel."""
    venv = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _dependency_links(venv)
    # no PYTHONPATH: the checkout (and its verikit.egg-info, left by the build) must not be seen
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-deps", "--no-index", str(dists["wheel"])], check=True, env=_env(venv.parent, "pip"))
    assert (venv / "bin" / "verikit").is_file()
    return venv


def _env(tmp: Path, name: str) -> dict:
    """A clean environment: no PYTHONPATH (the tests' own points at the checkout), its own
    result cache and data cache, the data mirror the tests use."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(VERIKIT_CACHE=str(tmp / f"cache-{name}"), VERIKIT_DATA=str(tmp / f"data-{name}"), HOME=str(tmp))
    return env


@pytest.fixture(scope="module")
def runs(wheel_venv, casp_mirror, tmp_path_factory):
    """``verikit run casp --dataset casp-sample10 --mode gold --sandbox host`` on TASKS
    from /tmp with the wheel, then the same from the checkout with the wheel run's result
    cache."""
    tmp = tmp_path_factory.mktemp("runs")
    args = ["run", "casp", "--dataset", "casp-sample10", "--mode", "gold", "--sandbox", "host", "-j", "2",
            *(a for t in TASKS for a in ("--task", t))]
    env = _env(tmp, "wheel")
    got = subprocess.run([str(wheel_venv / "bin" / "verikit"), *args, "--out", str(tmp / "wheel")], cwd="/tmp",
                         env=env, capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr[-3000:]
    env_checkout = {**env, "PYTHONPATH": str(ROOT)}  # the checkout's kit, given the wheel run's result cache
    got = subprocess.run([sys.executable, "-m", "harness", *args, "--out", str(tmp / "checkout")], cwd=ROOT,
                         env=env_checkout,
                         capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr[-3000:]
    return tmp / "wheel", tmp / "checkout", env


#: The fingerprints of the kit's toolchain images (Debian: Containerfile + pins; Nix: pins +
#: flake.nix + nix/), which name the images the container sandbox runs: printed as JSON.
FINGERPRINTS = ("from harness import toolchains; from harness.sandbox import images; "
                "pins = toolchains.load_pins(str(toolchains.PINS_FILE))['toolchains']; "
                "print(json.dumps({n: [images.fingerprint(n) if (t.get('images') or {}).get('debian') else None, "
                "images.nix_fingerprint(n)] for n, t in pins.items()}))")


@pytest.mark.slow
def test_the_kit_comes_only_from_the_wheel(wheel_venv, tmp_path):
    code = ("import harness, json, sys; from harness import resources; "
            "print(json.dumps({'file': harness.__file__, 'path': sys.path, 'installed': resources.installed(), "
            "'pins': str(resources.kit_file('images/toolchains.json'))}))")
    got = subprocess.run([str(wheel_venv / "bin" / "python"), "-c", code], cwd="/tmp", env=_env(tmp_path, "x"),
                         capture_output=True, text=True, check=True)
    info = json.loads(got.stdout)
    assert Path(info["file"]).resolve().is_relative_to(wheel_venv.resolve())
    assert not [p for p in info["path"] if p and Path(p).resolve().is_relative_to(ROOT)]
    assert info["installed"] == "wheel" and info["pins"].endswith("site-packages/harness/_kit/images/toolchains.json")
    # the images it would run in are the checkout's: the same files give the same fingerprints
    got = subprocess.run([str(wheel_venv / "bin" / "python"), "-c", "import json; " + FINGERPRINTS], cwd="/tmp",
                         env=_env(tmp_path, "x"), capture_output=True, text=True, check=True)
    here = subprocess.run([sys.executable, "-c", "import json; " + FINGERPRINTS], capture_output=True, text=True,
                          check=True)
    assert json.loads(got.stdout) == json.loads(here.stdout) and len(json.loads(got.stdout)) >= 8


@pytest.mark.realtool
@pytest.mark.slow
def test_a_run_from_the_wheel_equals_the_run_from_the_checkout(runs):
    wheel, checkout, _ = runs
    w, c = load_records(wheel / "records.jsonl"), load_records(checkout / "records.jsonl")
    n = len(TASKS)
    assert len(w) == n and sorted(r["task_id"] for r in w) == sorted(TASKS) and {r["verdict"] for r in w} == {"verified"}
    assert sorted(r["key"] for r in w) == sorted(r["key"] for r in c)  # the same job keys: same code and data
    assert json.loads((checkout / "run.json").read_text())["counts"]["cached"] == n  # found, not re-run
    diffs, counts = compare_runs(wheel, checkout)  # verdicts and goals exactly, report numbers too
    assert diffs == [] and counts["records"] == counts["verdicts_equal"] == counts["goals_equal"] == n
    assert counts["numbers"] > 0 and counts["numbers_equal"] == counts["numbers"]
    diffs, counts = compare_runs(REF, wheel, subset=True)  # and the committed reference run agrees
    assert diffs == [] and counts["verdicts_equal"] == n and counts["goals_equal"] == n


@pytest.mark.realtool
@pytest.mark.slow
def test_run_json_says_how_the_kit_was_installed(runs):
    wheel, checkout, _ = runs
    kw = json.loads((wheel / "run.json").read_text())["kit"]
    kc = json.loads((checkout / "run.json").read_text())["kit"]
    assert kw == {"version": "0.1.0", "git_commit": None, "git_dirty": None, "installed": "wheel"}
    assert kc["installed"] == "checkout" and kc["version"] == "0.1.0"
    assert kc["git_commit"] is None or len(kc["git_commit"]) == 40


@pytest.mark.realtool
@pytest.mark.slow
def test_what_only_a_checkout_has_is_a_clear_error_from_the_wheel(runs, wheel_venv):
    wheel, _, env = runs
    ok = subprocess.run([str(wheel_venv / "bin" / "verikit"), "validate", str(wheel)], cwd="/tmp", env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    got = subprocess.run([str(wheel_venv / "bin" / "verikit"), "artifact", "list"], cwd="/tmp", env=env,
                         capture_output=True, text=True)
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert "results/reproduced: the committed reference runs" in got.stderr and "not in the installed wheel" \
        in got.stderr
    got = subprocess.run([str(wheel_venv / "bin" / "verikit"), "images", "build", "framac", "--runner"], cwd="/tmp",
                         env={**env, "DOCKER_HOST": "unix:///nonexistent.sock"}, capture_output=True, text=True)
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert "a runner image needs a checkout of verikit" in got.stderr  # before any engine call
