"""flake.nix: Nix images of the toolchains, from images/toolchains.json, checked offline.

Runs the real Nix from Debian's nix-bin (installed by ``nox -s tests``). nixpkgs cannot be
downloaded here, so the flake is evaluated with EVERY nixpkgs input overridden by a stub
nixpkgs tree (tests/nix-stub/default.nix + an attrs.json this module writes per pinned
revision from images/toolchains.json). What that evaluates for real: the flake's inputs
and wiring, the version assertions (one stub carrying a wrong version makes evaluation
fail), the unfree predicate, the per-toolchain image assembly, the labels, the
fingerprint and the manifest each image would carry. What it cannot: whether the real
nixpkgs revisions have those attributes at those versions, and any build (docs/nix.md).
"""

from __future__ import annotations

import copy
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import toolchains
from harness.sandbox import images

ROOT = Path(__file__).resolve().parent.parent
STUB = ROOT / "tests" / "nix-stub" / "default.nix"
NIX_INSTANTIATE = shutil.which("nix-instantiate")
NIX = shutil.which("nix")
_no_nix = pytest.mark.skipif(NIX_INSTANTIATE is None or NIX is None,
                             reason="Nix (Debian nix-bin: nix, nix-instantiate) is not installed")


def needs_nix(test):
    """Runs the real Nix evaluator (realtool); skipped where Nix is not installed."""
    return pytest.mark.realtool(_no_nix(test))


FEATURES = ["--extra-experimental-features", "nix-command flakes"]
#: Concrete versions the stubs give for prefix pins ("exact": false): what a real revision has.
PREFIX_STUB = {"2.7": "2.7.18", "17": "17.0.12+7"}


def pins() -> dict:
    return toolchains.load_pins(str(toolchains.PINS_FILE))["toolchains"]  # the kit's own pins: what the flake builds


def nix_entries(tcs: dict):
    """(toolchain, tool, where, nix entry) for every tool's nix pin and its `with` packages."""
    for tc, spec in tcs.items():
        for tool, t in spec["tools"].items():
            n = t["nix"]
            if n is None:
                continue
            yield tc, tool, f"{tc}/{tool}", n
            for w in n.get("with", []):
                yield tc, tool, f"{tc}/{tool}+{w['name']}", w


# --- stub nixpkgs trees -------------------------------------------------------------------


def stub_attrs(tcs: dict) -> dict[str, dict]:
    """revision -> {"attrs": {attr: {pname, version, versions, unfree, output}}, "calls": {file: {pname, version}}}.

    Each attribute gets the version the flake expects to find at that revision: the pin
    itself, the base of an override (`override.from_version`, else any), and, for
    `.override {version}` users, a version table holding the requested version."""
    revs: dict[str, dict] = {}
    for _tc, _tool, where, n in nix_entries(tcs):
        rev = n.get("nixpkgs")
        if rev is None:
            continue
        r = revs.setdefault(rev, {"attrs": {}, "calls": {}})
        version = n["version"] if n.get("exact", True) else PREFIX_STUB[n["version"]]
        if n.get("call"):
            r["calls"][n["call"]] = {"pname": n.get("pname") or Path(n["call"]).parent.name, "version": version}
            continue
        a = r["attrs"].setdefault(n["attr"], {"pname": n.get("pname") or n["attr"].split(".")[-1], "versions": []})
        args_version = (n.get("args") or {}).get("version")
        if args_version:
            a["versions"].append(args_version)
            a.setdefault("_base", None)
        elif n.get("override"):
            base = n["override"].get("from_version")
            if base:
                assert a.get("_plain", base) == base, f"{where}: stub base version conflict"
                a["_base"] = base
        else:
            assert a.get("_plain", version) == version, f"{where}: two plain versions of {n['attr']} at {rev[:12]}"
            a["_plain"] = version
        if n.get("unfree"):
            a["unfree"] = True
        if n.get("output"):
            a["output"] = n["output"]
    for r in revs.values():
        for a in r["attrs"].values():
            a["version"] = a.pop("_plain", None) or a.pop("_base", None) or "0.0-stub-base"
            a.pop("_plain", None)
            a.pop("_base", None)
    return revs


def write_stub(directory: Path, revision: str, attrs: dict, calls: dict) -> Path:
    directory.mkdir(parents=True)
    shutil.copy(STUB, directory / "default.nix")
    (directory / "attrs.json").write_text(json.dumps({"revision": revision, "attrs": attrs}, indent=1))
    for rel, c in calls.items():
        f = directory / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f'{{ stubPackage, ... }}: stubPackage {{ pname = "{c["pname"]}"; version = "{c["version"]}"; }}\n')
    return directory


def flake_copy(tmp: Path, tcs: dict | None = None) -> Path:
    """The flake's files in a fresh directory (a path: flake sees exactly these files;
    ``tcs`` replaces images/toolchains.json's toolchains)."""
    dst = tmp / "flake"
    (dst / "images").mkdir(parents=True)
    shutil.copy(ROOT / "flake.nix", dst / "flake.nix")
    if (ROOT / "flake.lock").exists():
        shutil.copy(ROOT / "flake.lock", dst / "flake.lock")
    shutil.copytree(ROOT / "nix", dst / "nix", ignore=shutil.ignore_patterns("__pycache__"))
    data = toolchains.load_pins(str(toolchains.PINS_FILE))
    if tcs is not None:
        data = dict(data, toolchains=tcs)
    (dst / "images" / "toolchains.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return dst


def stubs(tmp: Path, tcs: dict, mutate=None) -> list[str]:
    """Write one stub per pinned revision (+ the image base) and return the
    ``--override-input`` arguments for all of them. ``mutate(revs)`` may corrupt one."""
    revs = stub_attrs(tcs)
    if mutate:
        mutate(revs)
    args = ["--override-input", "nixpkgs", f"path:{write_stub(tmp / 'stubs' / 'base', 'base', {}, {})}"]
    inputs = flake_inputs()
    for rev, r in sorted(revs.items()):
        if f"nixpkgs-{rev[:12]}" not in inputs:
            continue  # a revision flake.nix does not know: the flake must say so
        d = write_stub(tmp / "stubs" / rev[:12], rev, r["attrs"], r["calls"])
        args += ["--override-input", f"nixpkgs-{rev[:12]}", f"path:{d}"]
    return args


def nix(tmp: Path, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(tmp / "home"), XDG_CACHE_HOME=str(tmp / "cache"), NIX_CONFIG="")
    return subprocess.run([NIX, *FEATURES, *argv], capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """`nix flake check --no-build --offline` with every input stubbed, then the
    evaluated image metadata (`nix eval --json .#lib.images`)."""
    tmp = tmp_path_factory.mktemp("flake")
    tcs = pins()
    flake = flake_copy(tmp, tcs)
    overrides = stubs(tmp, tcs)
    check = nix(tmp, "flake", "check", "--no-build", "--offline", *overrides, f"path:{flake}")
    ev = nix(tmp, "eval", "--offline", "--json", *overrides, f"path:{flake}#lib")
    return {"check": check, "eval": ev, "lib": json.loads(ev.stdout) if ev.returncode == 0 else None,
            "tmp": tmp, "flake": flake, "overrides": overrides}


# --- parse, structure ---------------------------------------------------------------------


@needs_nix
def test_flake_and_nix_files_parse():
    for f in [ROOT / "flake.nix", *sorted((ROOT / "nix").glob("*.nix")), STUB]:
        proc = subprocess.run([NIX_INSTANTIATE, "--parse", str(f)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{f}: {proc.stderr}"


def flake_inputs() -> dict[str, dict]:
    proc = subprocess.run([NIX_INSTANTIATE, "--eval", "--strict", "--json", "-E", f"(import {ROOT / 'flake.nix'}).inputs"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@needs_nix
def test_one_input_per_pinned_revision_pinned_by_commit():
    inputs = flake_inputs()
    revs = {n["nixpkgs"] for _tc, _t, _w, n in nix_entries(pins()) if n.get("nixpkgs")}
    expected = {f"nixpkgs-{r[:12]}": f"github:NixOS/nixpkgs/{r}" for r in revs}
    tool_inputs = {k: v["url"] for k, v in inputs.items() if k != "nixpkgs"}
    assert tool_inputs == expected
    assert re.fullmatch(r"github:NixOS/nixpkgs/[0-9a-f]{40}", inputs["nixpkgs"]["url"])
    assert all(v.get("flake") is False for v in inputs.values())


# --- the offline evaluation -----------------------------------------------------------------


@needs_nix
def test_flake_check_with_stubbed_nixpkgs_passes(evaluated):
    """`nix flake check --no-build --offline`: the closest offline evaluation of the real
    outputs -- every packages.x86_64-linux.image-* is instantiated (drvPath), so every
    tool's attribute lookup, version assertion, unfree check, override and the image
    assembly are evaluated; only the stub nixpkgs trees are not real."""
    assert evaluated["check"].returncode == 0, evaluated["check"].stderr[-4000:]
    assert evaluated["eval"].returncode == 0, evaluated["eval"].stderr[-4000:]


@needs_nix
def test_every_published_pin_maps_to_a_flake_output(evaluated):
    lib = evaluated["lib"]
    tcs = pins()
    assert set(lib["images"]) == set(tcs)
    assert lib["published"] == {n: {t: s["published"] for t, s in tc["tools"].items()} for n, tc in tcs.items()}
    for name, tc in tcs.items():
        manifest = lib["images"][name]["manifest"]
        for tool, t in tc["tools"].items():
            if t["published"] is not None:
                assert t["nix"] is not None, f"{name}/{tool}: published {t['published']} but no Nix pin"
                assert tool in manifest["tools"], f"{name}/{tool} is not in image-{name}"


@needs_nix
def test_nix_images_would_report_pin_match_true(evaluated):
    """The manifest produced by evaluating each image's metadata, run through the
    harness's own pin logic (what `verikit images verify` reports as pin_match)."""
    for name, meta in evaluated["lib"]["images"].items():
        manifest = meta["manifest"]
        probed = toolchains.ProbedToolchain(name=name, flavor="nix", sandbox="manifest")
        for tool, spec in toolchains.toolchain_spec(name)["tools"].items():
            version = manifest["tools"][tool]["version"]
            probed.tools[tool] = {"version": version, "raw": "", "published": spec["published"],
                                  "match": toolchains.version_matches(spec["published"], version)}
            assert manifest["tools"][tool]["match"] == probed.tools[tool]["match"], (name, tool)
        assert probed.pin_match, f"{name}: drift {probed.drift}"
        assert manifest["packages"] == manifest["packages_pinned"], name


@needs_nix
def test_image_metadata_matches_the_debian_interface_and_the_harness_fingerprint(evaluated):
    for name, meta in evaluated["lib"]["images"].items():
        fp = images.nix_fingerprint(name)
        assert meta["fingerprint"] == fp == evaluated["lib"]["fingerprints"][name]
        assert meta["labels"] == {"verikit.toolchain": name, "verikit.flavor": "nix", "verikit.fingerprint": fp}
        assert meta["image"] == images.nix_image_tag(name) == f"verikit/{name}:nix-{fp[:12]}"
        m = meta["manifest"]
        assert (m["toolchain"], m["flavor"], m["missing"]) == (name, "nix", [])
        assert set(m["tools"]) == set(toolchains.toolchain_spec(name)["tools"])


@needs_nix
def test_pins_flake_outputs_and_debian_images_agree_on_names(evaluated):
    tcs = pins()
    lib = evaluated["lib"]
    debian = {n for n, t in tcs.items() if (t.get("images") or {}).get("debian")}
    assert {"framac", "rocq", "tlaplus", "dafny"} <= debian  # the images built and run here
    assert debian <= set(lib["images"]) == set(tcs) == {n.removeprefix("image-") for n in flake_outputs(evaluated)}
    for name in debian:  # a Debian and a Nix image of one toolchain have the same tools
        assert set(lib["images"][name]["manifest"]["tools"]) == set(tcs[name]["tools"])
        assert images.image_spec(name)["packages"]  # the Debian side still resolves
    verifier_toolchains = {"framac", "rocq", "lean", "isabelle", "tlaplus", "dafny", "hyperkernel"}
    assert verifier_toolchains <= set(tcs)


def flake_outputs(ev) -> list[str]:
    proc = nix(ev["tmp"], "eval", "--offline", "--json", *ev["overrides"], f"path:{ev['flake']}#packages.x86_64-linux",
               "--apply", "builtins.attrNames")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@needs_nix
def test_unfree_is_allowed_by_an_explicit_predicate(evaluated):
    assert evaluated["lib"]["unfreeNames"] == ["alt-ergo"]


def test_versions_come_only_from_toolchains_json():
    """No version literal in the Nix expressions: every version the flake asserts is read
    from images/toolchains.json."""
    for f in [ROOT / "flake.nix", *sorted((ROOT / "nix").glob("*.nix"))]:
        text = re.sub(r"#.*", "", f.read_text())
        assert not re.search(r'version\s*=\s*"[0-9]', text), f"{f.name}: version literal"


def test_probe_script_agrees_with_harness_version_semantics():
    probe = runpy.run_path(str(ROOT / "nix" / "probe.py"))  # no __pycache__ in nix/ (it is fingerprinted)
    cases = [("30.0", "30.0"), ("30.0", "25.0-beta"), ("1.8", "1.8.0"), ("4.6", "4.6.0.0"), ("2.7", "2.7.18"),
             ("Isabelle2024", "Isabelle2024"), ("1.3.2+8.20", "1.3.2+8.20"), ("1.8.0", "1.8.2"), (None, "1"),
             ("5.0", None)]
    for pin, v in cases:
        assert probe["version_matches"](pin, v) == toolchains.version_matches(pin, v), (pin, v)


# --- evaluation must fail on wrong pins -----------------------------------------------------


def run_check(tmp: Path, tcs: dict, mutate=None) -> subprocess.CompletedProcess:
    flake = flake_copy(tmp, tcs)
    return nix(tmp, "flake", "check", "--no-build", "--offline", *stubs(tmp, tcs, mutate), f"path:{flake}")


@needs_nix
def test_a_stub_with_a_wrong_version_fails_evaluation(tmp_path):
    """The revision of cvc4 does not have 1.8 (the stub says 1.7): evaluation must fail and
    say which tool, revision and versions."""
    def wrong(revs):
        rev = pins()["framac"]["tools"]["cvc4"]["nix"]["nixpkgs"]
        revs[rev]["attrs"]["cvc4"]["version"] = "1.7"

    proc = run_check(tmp_path, pins(), wrong)
    assert proc.returncode != 0
    assert "cvc4 at nixpkgs b6fea07f806dbc77efa6023a29d45aa39e8bbd3b has version 1.7, " \
           "images/toolchains.json pins 1.8" in proc.stderr, proc.stderr[-3000:]


@needs_nix
def test_a_version_missing_from_a_version_table_fails_evaluation(tmp_path):
    def no_172(revs):
        rev = pins()["framac"]["tools"]["why3"]["nix"]["nixpkgs"]
        revs[rev]["attrs"]["why3"]["versions"] = []

    proc = run_check(tmp_path, pins(), no_172)
    assert proc.returncode != 0 and "version 1.7.2 is not in its version table" in proc.stderr, proc.stderr[-3000:]


@needs_nix
def test_a_nix_pin_below_the_published_version_fails_evaluation(tmp_path):
    tcs = copy.deepcopy(pins())
    tcs["dafny"]["tools"]["dafny"]["nix"]["version"] = "4.3.0"
    proc = run_check(tmp_path, tcs)
    assert proc.returncode != 0
    assert "dafny/dafny (published 4.6, nix 4.3.0)" in proc.stderr, proc.stderr[-3000:]


@needs_nix
def test_an_unnamed_unfree_package_is_refused(tmp_path):
    def cvc4_unfree(revs):
        rev = pins()["framac"]["tools"]["cvc4"]["nix"]["nixpkgs"]
        revs[rev]["attrs"]["cvc4"]["unfree"] = True

    proc = run_check(tmp_path, pins(), cvc4_unfree)
    assert proc.returncode != 0 and "refusing to evaluate 'cvc4-1.8': unfree" in proc.stderr, proc.stderr[-3000:]


@needs_nix
def test_a_pinned_revision_without_input_fails_evaluation(tmp_path):
    tcs = copy.deepcopy(pins())
    tcs["tlaplus"]["tools"]["tlc"]["nix"]["nixpkgs"] = "0" * 40
    proc = run_check(tmp_path, tcs)
    assert proc.returncode != 0
    assert "images/toolchains.json pins nixpkgs 0000000000000000000000000000000000000000 but flake.nix has no input" \
        in proc.stderr, proc.stderr[-3000:]


@needs_nix
def test_tools_of_one_build_from_two_revisions_fail_evaluation(tmp_path):
    tcs = copy.deepcopy(pins())
    tcs["rocq"]["tools"]["stdpp"]["nix"]["nixpkgs"] = tcs["framac"]["tools"]["why3"]["nix"]["nixpkgs"]
    proc = run_check(tmp_path, tcs)
    assert proc.returncode != 0 and "rocq/stdpp vs coq" in proc.stderr, proc.stderr[-3000:]


# --- verikit images build NAME --flavor nix (the nix and engine CLIs are fakes here) -------
# The real `nix build` of an image needs nixpkgs from the network; these tests check the
# plumbing around it with scripts that record their arguments and play nix/podman.

FAKE_NIX = r"""#!/bin/sh
echo "$@" >> "$FAKE_LOG/nix.args"
[ -n "$FAKE_NIX_FAIL" ] && { echo "$FAKE_NIX_FAIL" >&2; exit 1; }
while [ $# -gt 0 ]; do case "$1" in --out-link) link=$2; shift ;; esac; shift; done
printf 'fake docker-archive' > "$FAKE_LOG/docker-image.tar.gz"
ln -sfn "$FAKE_LOG/docker-image.tar.gz" "$link"
"""
FAKE_ENGINE = r"""#!/bin/sh
echo "$@" >> "$FAKE_LOG/engine.args"
case "$1" in
  load) echo "Loaded image: $FAKE_TAG"; touch "$FAKE_LOG/loaded" ;;
  image) [ -f "$FAKE_LOG/loaded" ] || { echo "Error: no such image" >&2; exit 125; }
         printf '%s\n' "$FAKE_LABELS" ;;
esac
"""


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, text in (("nix", FAKE_NIX), ("podman", FAKE_ENGINE)):
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    fp = images.nix_fingerprint("framac")
    tag = f"verikit/framac:nix-{fp[:12]}"
    env = {"FAKE_LOG": str(tmp_path), "FAKE_TAG": tag, "PATH": f"{bindir}:{os.environ['PATH']}",
           "VERIKIT_NIX_OUT_DIR": str(tmp_path / "out"),
           "FAKE_LABELS": json.dumps({"verikit.toolchain": "framac", "verikit.flavor": "nix",
                                      "verikit.fingerprint": fp})}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return {"dir": tmp_path, "bin": bindir, "tag": tag, "fp": fp, "env": env}


def test_build_nix_builds_loads_and_checks_the_label(fakes):
    link = fakes["dir"] / "result"
    tag = images.build_nix("framac", engine="podman", out_link=link, log=lambda m: None)
    assert tag == fakes["tag"] == images.nix_image_tag("framac")
    nix_args = (fakes["dir"] / "nix.args").read_text().split()
    assert nix_args[:4] == ["--extra-experimental-features", "nix-command", "flakes", "build"]
    assert nix_args[4] == f"{ROOT}#image-framac" and nix_args[5:] == ["--out-link", str(link)]
    engine = (fakes["dir"] / "engine.args").read_text().splitlines()
    assert f"load -i {fakes['dir'] / 'docker-image.tar.gz'}" in engine
    # built once: a second call finds the label of the current fingerprint and reuses it
    images.build_nix("framac", engine="podman", out_link=link, log=lambda m: None)
    assert len((fakes["dir"] / "nix.args").read_text().splitlines()) == 1


def test_build_nix_refuses_an_image_of_other_pins(fakes, monkeypatch):
    monkeypatch.setenv("FAKE_LABELS", json.dumps({"verikit.flavor": "nix", "verikit.fingerprint": "0" * 64}))
    with pytest.raises(images.SandboxError, match="label verikit.fingerprint=0000"):
        images.build_nix("framac", engine="podman", out_link=fakes["dir"] / "result", log=lambda m: None)


def test_build_nix_says_how_to_record_a_missing_source_hash(fakes, monkeypatch):
    monkeypatch.setenv("FAKE_NIX_FAIL", "error: hash mismatch in fixed-output derivation: got: sha256-abc=")
    with pytest.raises(images.SandboxError, match="record it in images/toolchains.json"):
        images.build_nix("dafny", engine="podman", out_link=fakes["dir"] / "result", log=lambda m: None)


@pytest.mark.slow
def test_cli_images_build_flavor_nix(fakes):
    env = dict(os.environ, **fakes["env"])
    proc = subprocess.run([sys.executable, "-m", "harness", "images", "build", "framac", "--flavor", "nix"],
                          capture_output=True, text=True, env=env, cwd=fakes["dir"])
    assert proc.returncode == 0, proc.stderr
    assert f"{fakes['tag']}: built and loaded" in proc.stderr
    assert (fakes["dir"] / "out" / "image-framac").is_symlink()
    bad = subprocess.run([sys.executable, "-m", "harness", "images", "build", "ntp4vc-rocq", "--flavor", "nix"],
                         capture_output=True, text=True, env=env, cwd=fakes["dir"])
    assert bad.returncode == 2 and "derived image" in bad.stderr


# --- nix/probe.py, the image's build-time probe, on the real host tools ---------------------


def probe_spec(name: str, tools: list[str], env_root: Path) -> dict:
    """The spec nix/image.nix hands nix/probe.py, for some tools of toolchain ``name``."""
    spec = toolchains.toolchain_spec(name)
    return {"toolchain": name, "fingerprint": "f" * 64, "image": f"verikit/{name}:nix-test", "env": ["PATH=/bin"],
            "missing": [],
            "tools": {t: {"probe": spec["tools"][t]["probe"], "pattern": spec["tools"][t]["pattern"],
                          "published": spec["tools"][t]["published"], "expected": spec["tools"][t]["nix"]["version"],
                          "nix": {"version": spec["tools"][t]["nix"]["version"], "pinned": spec["tools"][t]["nix"]["version"],
                                  "exact": True, "nixpkgs": spec["tools"][t]["nix"]["nixpkgs"], "attr": "x", "call": None,
                                  "store_path": str(env_root)}}
                      for t in tools}}


def run_probe_script(tmp_path: Path, spec: dict, links: dict[str, str]):
    root = tmp_path / "env"
    for dst, src in links.items():
        (root / dst).parent.mkdir(parents=True, exist_ok=True)
        (root / dst).symlink_to(src)
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "etc" / "toolchain.json"
    proc = subprocess.run([sys.executable, str(ROOT / "nix" / "probe.py"), str(root), str(tmp_path / "spec.json"), str(out)],
                          capture_output=True, text=True, timeout=300)
    return proc, out


@pytest.mark.realtool
@pytest.mark.skipif(shutil.which("frama-c") is None, reason="the host's Frama-C (scripts/bootstrap-debian.sh framac)")
def test_probe_script_fails_the_image_build_when_a_published_pin_is_not_met(tmp_path):
    """Debian's Frama-C 25.0 and no Alt-Ergo: the build-time probe refuses to write a manifest."""
    spec = probe_spec("framac", ["frama-c", "alt-ergo", "z3"], tmp_path / "env")
    proc, out = run_probe_script(tmp_path, spec, {"bin/frama-c": shutil.which("frama-c"), "bin/z3": shutil.which("z3")})
    assert proc.returncode == 1 and not out.exists()
    assert "frama-c: probed 25.0" in proc.stderr and "published 30.0" in proc.stderr
    assert "alt-ergo: probed nothing" in proc.stderr


@pytest.mark.realtool
@pytest.mark.skipif(shutil.which("z3") is None or shutil.which("cvc4") is None, reason="the host's Z3 and CVC4")
def test_probe_script_writes_the_manifest_the_harness_reads(tmp_path):
    """Z3 4.8.12 and CVC4 1.8 meet CASP's pins: a manifest in the Debian images' format,
    whose tools agree with the harness's own probe of the same binaries."""
    spec = probe_spec("framac", ["z3", "cvc4"], tmp_path / "env")
    proc, out = run_probe_script(tmp_path, spec, {"bin/z3": shutil.which("z3"), "bin/cvc4": shutil.which("cvc4")})
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads(out.read_text())
    assert (manifest["toolchain"], manifest["flavor"]) == ("framac", "nix")
    assert {t: v["version"] for t, v in manifest["tools"].items()} == {"z3": "4.8.12", "cvc4": "1.8"}
    assert all(v["match"] is True for v in manifest["tools"].values())
    assert manifest["packages"] == manifest["packages_pinned"]


@needs_nix
def test_dpkg_query_shim_answers_the_debian_probes_in_the_rocq_image(evaluated, tmp_path):
    """The rocq toolchain probes stdpp and CoqHammer with `dpkg-query -W -f=${Version} PKG`
    (Debian); the Nix image's shim (rendered by evaluation) must answer them so that the
    probe's pattern extracts the Nix package's version, and fail for anything else."""
    ev = nix(evaluated["tmp"], "eval", "--offline", "--raw", *evaluated["overrides"],
             f"path:{evaluated['flake']}#packages.x86_64-linux.image-rocq.verikit.dpkgShim.text")
    assert ev.returncode == 0, ev.stderr[-2000:]
    present = tmp_path / "store-path"
    present.mkdir()
    script = tmp_path / "dpkg-query"
    script.write_text(re.sub(r"/nix/store/[a-z0-9]{32}-[^; ]+", str(present), ev.stdout))
    spec = toolchains.toolchain_spec("rocq")["tools"]
    for tool in ("stdpp", "coq-hammer"):
        argv = spec[tool]["probe"]
        assert argv[0] == "dpkg-query"
        proc = subprocess.run(["sh", str(script), *argv[1:]], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert re.search(spec[tool]["pattern"], proc.stdout).group(1) == spec[tool]["nix"]["version"]
    missing = subprocess.run(["sh", str(script), "-W", "-f=${Version}", "libc6"], capture_output=True, text=True)
    assert missing.returncode == 1 and "no packages found matching libc6" in missing.stderr
    script.write_text(ev.stdout)  # the real store paths are not on this machine: "not installed"
    gone = subprocess.run(["sh", str(script), *spec["stdpp"]["probe"][1:]], capture_output=True, text=True)
    assert gone.returncode == 1 and "is not installed" in gone.stderr
