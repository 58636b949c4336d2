"""Tests of harness/verifiers/hyperkernel.py (OSVBench's Hyperkernel verifier).

The verifier's image (``lsysimpure/osvbench:001``: Python 2.7, LLVM 5.0, Z3 4.5.0) cannot
be had on this machine (no Docker Hub), so the verifier is tested on the recorded real
output of the published run (``outputs/output_claude3sonnet_Spec`` of the pinned
``osvbench`` dataset; tests marked ``recorded``): its parser on all 245 entries, and the
runner (resume, no duplicates, time limits, upstream-format log) through a sandbox that
replays those recorded outputs for the recorded specs. The command line and the job
script are checked as text and with ``sh -n``; nothing model-written runs here."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from harness import datasets
from harness.benchmarks import Candidate, osvbench
from harness.results import load_records
from harness.sandbox import Limits, ProcResult
from harness.toolchains import ProbedToolchain
from harness.verifiers import get_verifier, hyperkernel as hk

ROOT = Path(__file__).resolve().parents[1]
DS = {"name": "osvbench", "revision": "3247b75e34bec129328e4930d9b5f56448d072a1"}


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    if not os.environ.get("VERIKIT_DATA_MIRRORS"):
        pytest.skip("VERIKIT_DATA_MIRRORS is not set: the recorded Hyperkernel log of the osvbench dataset "
                    "(../shared/data beside the checkout) is needed")
    try:
        return datasets.fetch("osvbench", data_dir=tmp_path_factory.mktemp("verikit-data"), offline=True)
    except datasets.DatasetUnavailable as exc:
        pytest.skip(f"no mirror in VERIKIT_DATA_MIRRORS holds the osvbench files: {exc}")


@pytest.fixture(scope="module")
def tasks(fetched):
    return osvbench.load_benchmark(fetched).tasks


@pytest.fixture(scope="module")
def recorded(fetched, tasks):
    """task_id -> (task, published spec, recorded log entry)."""
    log = fetched.files[osvbench.LOG].read_text(encoding="utf-8")
    specs = json.loads(fetched.files[osvbench.RESULTS_JSON].read_text())
    entries = hk.split_upstream_log(log, osvbench.LOG)
    return {t.task_id: (t, specs[t.task_id][t.syscall][0], e) for t, e in zip(tasks, entries)}


def proc_of(entry: hk.LogEntry, **kw) -> ProcResult:
    """The recorded output of one check as a ProcResult (the entry minus its ``<name>:``
    header line; exit 0 for a passing unittest run, 1 otherwise)."""
    body = entry.text.split("\n", 1)[1]
    code = 0 if hk.classify(body, entry.syscall).kind == "verified" else 1
    return ProcResult(argv=["/bin/sh", hk.SCRIPT_FILE, entry.syscall, "600"], returncode=kw.pop("returncode", code),
                      stdout=body, stderr="", **kw)


class ReplaySandbox:
    """Replays the recorded Hyperkernel output of each recorded spec: a stand-in for the
    container of the job image, which cannot be had here. It never executes the spec."""

    name = "replay"
    image = hk.JOB_IMAGE
    image_digest = None

    def __init__(self, recorded, timeout_syscalls=()):
        self.by_module = {hk.spec_module(spec): e for _, spec, e in recorded.values()}
        self.timeout_syscalls = set(timeout_syscalls)
        self.calls: list[list[str]] = []

    def run(self, argv, *, files=None, limits=None, collect=(), env=None):
        self.calls.append(list(argv))
        assert argv[:2] == ["/bin/sh", hk.SCRIPT_FILE] and files[hk.SCRIPT_FILE] == hk.JOB_SCRIPT
        assert env["VERIKIT_HK_ROOT"] == hk.HK_ROOT and limits.wall_s == float(argv[3]) + hk.SETUP_S
        entry = self.by_module[files[hk.SPEC_FILE]]
        assert entry.syscall == argv[2]
        if entry.syscall in self.timeout_syscalls:
            return ProcResult(argv=list(argv), returncode=-9, stdout="Using z3 v4.5.0.0\n", timed_out=True,
                              wall_s=limits.wall_s)
        return proc_of(entry)


def toolchain() -> ProbedToolchain:
    """The toolchain as the recorded log shows it ("Using z3 v4.5.0.0"; Python's patch
    version is not in the log)."""
    tools = {"python": {"version": None, "raw": "not in the recorded log", "published": "2.7", "match": None},
             "z3": {"version": "4.5.0.0", "raw": "Using z3 v4.5.0.0", "published": "4.5.0", "match": True},
             "llvm": {"version": None, "raw": "not probed", "published": "5.0", "match": None}}
    return ProbedToolchain(name="hyperkernel", flavor="host", sandbox="replay", tools=tools, image=hk.JOB_IMAGE)


def items(tasks, recorded, ids):
    cands = [Candidate(tid, "claude3sonnet", 0, recorded[tid][1], f"{osvbench.RESULTS_JSON}:{tid}") for tid in ids]
    return osvbench.spec_jobs(tasks, cands)


# --- command line -------------------------------------------------------------------------

def test_registered_as_a_verifier():
    v = get_verifier("hyperkernel")
    assert v.name == "hyperkernel" and v.toolchain == "hyperkernel"


def test_command_and_files():
    v = hk.Hyperkernel()
    opts = v.options(syscall="sys_map_pml4")
    assert opts == {"syscall": "sys_map_pml4", "timeout_s": 600.0, "image": hk.JOB_IMAGE,
                    "verifier_module": f"hyperkernel/{hk.MODULE_VERSION}"}
    argv, env, collect = v.command(opts)
    assert argv == ["/bin/sh", "verikit_hyperkernel.sh", "sys_map_pml4", "600"] and collect == []
    assert env["VERIKIT_HK_ROOT"] == "/root/hyperkernel"
    assert env["VERIKIT_Z3_PYTHON"] == "/root/Projects/z3-z3-4.5.0/build/python"  # OSVBench Dockerfile ENV
    files = v.files("\ndef sys_map_pml4(old):\n    return z3.BoolVal(True), old\n")
    assert files["specs.py"] == hk.SPEC_HEADER + "\ndef sys_map_pml4(old):\n    return z3.BoolVal(True), old\n" + "\n"
    assert files["verikit_hyperkernel.sh"] == hk.JOB_SCRIPT
    for bad in ("sys_x; rm -rf /", "", "../x"):
        with pytest.raises(ValueError, match="bad syscall name"):
            v.options(syscall=bad)
    with pytest.raises(ValueError, match="timeout_s must be > 0"):
        v.options(syscall="sys_x", timeout_s=0)


def test_job_script_is_valid_sh_and_runs_upstreams_command(tmp_path):
    script = tmp_path / hk.SCRIPT_FILE
    script.write_text(hk.JOB_SCRIPT)
    proc = subprocess.run(["/bin/sh", "-n", str(script)], capture_output=True, text=True)  # parse only
    assert proc.returncode == 0, proc.stderr
    s = hk.JOB_SCRIPT
    # the command make runs for "make hv6-verify -- -v --failfast HV6.test_<syscall>" (hv6/Makefrag)
    assert 'python2 o.x86_64/hv6/hv6py/kernel/spec/main.py -v --failfast "HV6.test_$syscall"' in s
    assert 'PYTHONPATH="$z3py:irpy:o.x86_64/hv6/:$hk/o.x86_64/hv6/"' in s
    assert "cp specs.py o.x86_64/hv6/hv6py/kernel/spec/spec/specs.py" in s
    assert 'exec timeout -k 10 "$limit" python2' in s  # a real time limit inside the container
    assert "exit 90" in s and "exit 91" in s


def test_spec_header_is_upstreams_and_compiles():
    compile(hk.SPEC_HEADER, "specs.py", "exec")  # imports only: valid in Python 2 and 3
    assert hk.SPEC_HEADER.startswith("\n#\n# Copyright 2017 Hyperkernel Authors\n")
    assert hk.SPEC_HEADER.endswith("        is_pn_valid,\n)\n\n")
    assert hk.SPEC_HEADER_LINES == 34


def test_derived_containerfile():
    text = hk.DERIVED_CONTAINERFILE
    assert text.splitlines()[4] == f"FROM {hk.UPSTREAM_IMAGE}"
    assert "chmod -R a+rX /root/hyperkernel /root/Projects" in text and "ENTRYPOINT []" in text


# --- parsing the recorded output -----------------------------------------------------------

@pytest.mark.recorded
def test_parse_every_recorded_entry(recorded):
    """All 245 recorded checks: the verdict follows upstream's class (pass -> verified,
    semantic -> failed, syntax -> invalid), and the classification is in ``extra``."""
    v = hk.Hyperkernel()
    verdicts = Counter()
    for tid, (task, spec, entry) in recorded.items():
        r = v.parse(proc_of(entry), v.options(syscall=task.syscall))
        up = hk.upstream_class(entry.text)
        assert r.extra["upstream_class"] == up
        assert r.verdict == {"pass": "verified", "semantic": "failed", "syntax": "invalid"}[up], tid
        assert r.extra["z3_version"] in ("4.5.0.0", None)
        assert r.extra["output_chars"] == len(proc_of(entry).stdout) + 1
        verdicts[r.verdict] += 1
        if r.verdict == "invalid":
            assert r.reason.startswith(r.extra["exception"] + ":") and r.messages
    assert verdicts == {"verified": 110, "failed": 80, "invalid": 55}


@pytest.mark.recorded
def test_parse_recorded_examples(recorded):
    v = hk.Hyperkernel()
    _, _, e = recorded["7"]  # sys_copy_frame: hv6py's assertion on a lambda assignment
    r = v.parse(proc_of(e), v.options(syscall="sys_copy_frame"))
    assert r.verdict == "invalid" and r.extra["exception"] == "AssertionError" and r.extra["raised_in"] == "hv6py"
    assert r.extra["outcome"] == "FAIL" and r.extra["spec_line"] == 61 - hk.SPEC_HEADER_LINES
    assert r.extra["spec_code"] == "new.pages[to].data = lambda idx, oldfn: old.pages[frm].data(idx)"
    _, _, e = recorded["141"]  # the one real SyntaxError: the module does not compile
    r = v.parse(proc_of(e), v.options(syscall="send_proc"))
    assert (r.verdict, r.extra["kind"], r.extra["outcome"]) == ("invalid", "python_syntax", None)
    _, _, e = recorded["9"]  # sys_free_pd: Z3 counterexample
    r = v.parse(proc_of(e), v.options(syscall="sys_free_pd"))
    assert r.verdict == "failed" and r.extra["cause"] == "counterexample" and r.extra["upstream_class"] == "semantic"
    assert "Could not prove" in r.extra["output_excerpt"] and "[... " in r.extra["output_excerpt"]


@pytest.mark.recorded
def test_parse_fails_closed(recorded):
    v = hk.Hyperkernel()
    opts = v.options(syscall="sys_map_page_desc")
    _, _, ok = recorded["0"]
    assert v.parse(proc_of(ok), opts).verdict == "verified"
    # the ok line printed, but the run exited non-zero: never verified
    assert v.parse(proc_of(ok, returncode=1), opts).verdict == "infra_error"
    # a passing line for another syscall's test is not this task's outcome
    assert v.parse(proc_of(ok), v.options(syscall="sys_map_proc")).verdict != "verified"
    assert v.parse(ProcResult(argv=[], returncode=None, start_error="no such image"), opts).verdict == "infra_error"
    r = v.parse(ProcResult(argv=[], returncode=90, stderr="verikit: cannot copy /root/hyperkernel/o.x86_64/hv6/hv6py"),
                opts)
    assert r.verdict == "infra_error" and "expected Hyperkernel/Z3 layout" in r.reason
    r = v.parse(ProcResult(argv=[], returncode=0, stdout=""), opts)
    assert r.verdict == "infra_error" and r.extra["kind"] == "no_test_result"


def test_parse_timeouts_and_memout():
    v = hk.Hyperkernel()
    opts = v.options(syscall="sys_kill", timeout_s=30)
    for proc in (ProcResult(argv=[], returncode=124, stdout="Using z3 v4.5.0.0\n"),  # timeout(1)
                 ProcResult(argv=[], returncode=-9, timed_out=True)):  # the sandbox's wall-time limit
        r = v.parse(proc, opts)
        assert r.verdict == "timeout" and r.reason == "no result within 30 s"
        assert r.extra["upstream_class"] == "semantic" and r.extra["cause"] == "timeout"
    assert v.parse(ProcResult(argv=[], returncode=137, memout=True), opts).verdict == "memout"


def test_probe_line_gives_versions():
    v = hk.Hyperkernel()
    r = v.parse(ProcResult(argv=[], returncode=0, stderr="verikit-probe: python 2.7.12 z3 4.5.0.0\n"),
                v.options(syscall="sys_x"))
    assert r.extra["versions"] == {"python": "2.7.12", "z3": "4.5.0.0"}


def test_split_upstream_log_errors():
    with pytest.raises(hk.LogError, match=r"^log:2: text before the first"):
        hk.split_upstream_log("\nstray\nSyscall sys_x:\nok\n", "log")
    with pytest.raises(hk.LogError, match="no 'Syscall <name>:' entry header"):
        hk.split_upstream_log("nothing here", "log")
    # "Syscall " inside an output does not start an entry (it does with upstream's split)
    text = "\nSyscall sys_a:\nSyscall sys_b failed\n\nSyscall sys_c:\nx\n"
    assert [e.syscall for e in hk.split_upstream_log(text)] == ["sys_a", "sys_c"]
    assert len(hk.upstream_split(text)) == 3
    assert hk.upstream_class("no colon here") is None


# --- the runner (upstream's spec_util.py, fixed) ------------------------------------------------

IDS = ["0", "7", "9", "13", "24", "121", "137", "141"]  # pass, AssertionError, counterexample, ...


@pytest.mark.recorded
def test_runner_records_resumes_and_never_duplicates(tasks, recorded, tmp_path):
    sb = ReplaySandbox(recorded)
    jobs = items(tasks, recorded, IDS)
    kw = dict(benchmark="osvbench", benchmark_version=osvbench.VERSION, dataset=DS, toolchain=toolchain())
    recs, stats = hk.run_specs(jobs, sb, tmp_path, **kw)
    assert stats["ran"] == len(IDS) and len(sb.calls) == len(IDS)
    assert [r["task_id"] for r in recs] == IDS
    got = {r["task_id"]: (r["verdict"], r["verifier"]["extra"]["upstream_class"]) for r in recs}
    assert got["0"] == ("verified", "pass") and got["9"] == ("failed", "semantic")
    assert got["141"] == ("invalid", "syntax") and got["7"] == ("invalid", "syntax")
    # a rerun resumes: nothing runs again, nothing is appended twice
    recs2, stats2 = hk.run_specs(jobs, sb, tmp_path, **kw)
    assert stats2["resumed"] == len(IDS) and stats2["ran"] == 0 and len(sb.calls) == len(IDS)
    assert len(load_records(tmp_path / "records.jsonl")) == len(IDS)
    # a run killed mid-write: a torn last line and 3 records missing
    lines = (tmp_path / "records.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "records.jsonl").write_text("".join(lines[:5]) + lines[5][:40])
    recs3, stats3 = hk.run_specs(jobs, sb, tmp_path, **kw)
    assert stats3["resumed"] == 5 and stats3["ran"] == 3
    on_disk = load_records(tmp_path / "records.jsonl")
    assert len(on_disk) == len(IDS) and len({r["key"] for r in on_disk}) == len(IDS)
    assert [r["verdict"] for r in recs3] == [r["verdict"] for r in recs]


@pytest.mark.recorded
def test_runner_time_limit_and_rejection(tasks, recorded, tmp_path):
    sb = ReplaySandbox(recorded, timeout_syscalls={"sys_map_dev"})
    jobs = items(tasks, recorded, ["2", "0"])
    forged = osvbench.spec_jobs(tasks, [Candidate("0", "claude3sonnet", 1, 'print "test_sys_map_page_desc ... ok"',
                                                  "test:forged")])
    recs, stats = hk.run_specs(jobs + forged, sb, tmp_path, benchmark="osvbench", benchmark_version="1", dataset=DS,
                               toolchain=toolchain(), timeout_s=45)
    by = {(r["task_id"], r["candidate"]["sample"]): r for r in recs}
    t = by[("2", 0)]
    assert t["verdict"] == "timeout" and t["verifier"]["extra"]["upstream_class"] == "semantic"
    assert t["limits"]["wall_s"] == 45 + hk.SETUP_S and t["verifier"]["options"]["timeout_s"] == 45
    assert by[("0", 1)]["verdict"] == "rejected" and by[("0", 1)]["checks"][0]["ok"] is False
    assert len(sb.calls) == 2  # the rejected spec never ran
    path = tmp_path / "out_log"
    hk.write_upstream_log(recs, [("2", "sys_map_dev"), ("0", "sys_map_page_desc")], path)
    entries = hk.split_upstream_log(path.read_text())
    assert [hk.upstream_class(e.text) for e in entries] == ["semantic", "pass"]  # "Error: Timeout." as intended
    assert "Error: Timeout." in entries[0].text


@pytest.mark.recorded
@pytest.mark.filterwarnings("ignore::harness.benchmarks.osvbench.UpstreamQuirkWarning")
def test_verify_predictions_end_to_end(fetched, tasks, recorded, tmp_path):
    """predictions (converted from upstream's results JSON) -> records, summary.json and an
    upstream-format log; a rerun resumes and rewrites, never appends."""
    lines, _ = osvbench.convert_upstream_results(fetched.files[osvbench.RESULTS_JSON], tasks)
    preds = tmp_path / "p.jsonl"
    osvbench.write_predictions([ln for ln in lines if ln["task_id"] in IDS], preds)
    sb = ReplaySandbox(recorded)
    out = tmp_path / "run"
    s = osvbench.verify(preds, out, sandbox=sb, toolchain=toolchain(), ks=(1,))
    assert s["counts"]["ran"] == len(IDS) and s["predictions"]["candidates"] == len(IDS)
    m = s["per_model"]["claude3sonnet"]
    assert m["classes"] == {"pass": 1, "semantic": 1, "syntax": 6}
    assert m["causes"] == {"verified": 1, "counterexample": 1, "AttributeError": 2, "AssertionError": 1,
                           "Z3Exception": 1, "ValueError": 1, "SyntaxError": 1}
    assert json.loads((out / "summary.json").read_text())["pass_at_k"] == s["pass_at_k"]
    log = (out / "output_upstream_format").read_text()
    assert [e.syscall for e in hk.split_upstream_log(log)] == [recorded[t][0].syscall for t in IDS]
    s2 = osvbench.verify(preds, out, sandbox=sb, toolchain=toolchain(), ks=(1,))
    assert s2["counts"]["resumed"] == len(IDS) and s2["counts"]["ran"] == 0
    assert (out / "output_upstream_format").read_text() == log
    assert len(load_records(out / "records.jsonl")) == len(IDS)


def test_runner_refuses_the_host_sandbox(tasks, recorded, tmp_path):
    from harness.sandbox.local import HostSandbox

    with pytest.raises(ValueError, match="model-written Python: they run only in a container sandbox"):
        hk.run_specs(items(tasks, recorded, ["0"]), HostSandbox(), tmp_path, benchmark="osvbench",
                     benchmark_version="1", dataset=DS, toolchain=toolchain())
    assert not (tmp_path / "records.jsonl").exists()


@pytest.mark.recorded
@pytest.mark.slow
def test_upstream_format_log_round_trip_over_all_245(tasks, recorded, tmp_path):
    """All 245 recorded checks through the runner, then an upstream-format log: one entry
    per task, each with the class of the original entry; written again, it is identical
    (no append)."""
    sb = ReplaySandbox(recorded)
    recs, stats = hk.run_specs(items(tasks, recorded, [t.task_id for t in tasks]), sb, tmp_path,
                               benchmark="osvbench", benchmark_version="1", dataset=DS, toolchain=toolchain())
    assert stats["ran"] == 245
    order = [(t.task_id, t.syscall) for t in tasks]
    path = tmp_path / "output_upstream_format"
    assert hk.write_upstream_log(recs, order, path) == 245
    first = path.read_text()
    hk.write_upstream_log(recs, order, path)
    assert path.read_text() == first
    entries = hk.split_upstream_log(first)
    assert len(entries) == len(hk.upstream_split(first)) == 245
    assert [hk.upstream_class(e.text) for e in entries] == [hk.upstream_class(recorded[t.task_id][2].text)
                                                           for t in tasks]
    summary = osvbench.summarize(recs, tasks)
    m = summary["per_model"]["claude3sonnet"]
    assert m["classes"] == {"pass": 110, "semantic": 80, "syntax": 55}
    assert m["pass_at_1_percent_by_bug_type"]["incorrect pointer"] == 39.44
    assert summary["pass_at_k"]["claude3sonnet"]["pass_at_k"]["1"] == pytest.approx(110 / 245)


# --- pass@k ---------------------------------------------------------------------------------

def rec(task, model, sample, verdict):
    return {"task_id": task, "candidate": {"model": model, "sample": sample}, "verdict": verdict}


def test_pass_at_k_unbiased_from_n_samples():
    recs = [rec("a", "m", i, v) for i, v in enumerate(["verified", "failed", "verified", "invalid", "timeout"])]
    recs += [rec("b", "m", i, "failed") for i in range(5)]
    recs += [rec("b", "m", 5, "infra_error")]  # ours: left out, counted
    out = hk.pass_at_k(recs, ks=(1, 3, 5, 6))["m"]
    assert out["tasks"] == 2 and out["samples_per_task"] == {"min": 5, "max": 5} and out["infra_error"] == 1
    pa = out["pass_at_k"]
    assert pa["1"] == pytest.approx((2 / 5 + 0) / 2)
    assert pa["3"] == pytest.approx((1 - math.comb(3, 3) / math.comb(5, 3)) / 2)  # a: 0.9, b: 0
    assert pa["5"] == pytest.approx(0.5)  # "any of n": what upstream's runner could compute
    assert pa["6"] is None and "pass@6 needs 6 samples" in out["notes"][0]


# --- without the image ----------------------------------------------------------------------

def test_no_engine_is_a_clear_message():
    with pytest.raises(hk.HyperkernelUnavailable) as exc:
        hk.ensure_image("unix:///nonexistent/verikit-test-docker.sock")
    msg = str(exc.value)
    assert "no container engine at unix:///nonexistent/verikit-test-docker.sock" in msg
    assert f"docker pull {hk.UPSTREAM_IMAGE}" in msg and hk.JOB_IMAGE in msg


class EngineWithout:
    """A Docker client whose engine has only the images named (the real client raises
    ImageNotFound for the others)."""

    def __init__(self, *have):
        from docker.errors import ImageNotFound

        self.have, self.missing = set(have), ImageNotFound

    @property
    def images(self):
        return self

    def get(self, name):
        if name not in self.have:
            raise self.missing(f"No such image: {name}")
        return type("Image", (), {"id": "sha256:" + "0" * 64})()


def test_missing_images_are_named_with_how_to_get_them():
    with pytest.raises(hk.HyperkernelUnavailable, match=f"neither {hk.JOB_IMAGE} nor {hk.UPSTREAM_IMAGE}"):
        hk.ensure_image(client=EngineWithout())
    with pytest.raises(hk.HyperkernelUnavailable, match=f"{hk.UPSTREAM_IMAGE} is present, but the job image"):
        hk.ensure_image(client=EngineWithout(hk.UPSTREAM_IMAGE))
    assert hk.ensure_image(client=EngineWithout(hk.JOB_IMAGE)) == "sha256:" + "0" * 64


def test_cli_check_without_image_exits_2_without_traceback():
    env = dict(os.environ, DOCKER_HOST="unix:///nonexistent/verikit-test-docker.sock")
    proc = subprocess.run([sys.executable, "-m", "harness.verifiers.hyperkernel", "check"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: no container engine") and hk.UPSTREAM_IMAGE in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "harness.verifiers.hyperkernel", "containerfile"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == hk.DERIVED_CONTAINERFILE


@pytest.mark.container
def test_real_engine_without_the_image():
    """With a real Docker-API engine here (Podman), the image is not there: the message."""
    from harness.sandbox.container import engine_reachable

    if not engine_reachable():
        pytest.skip("no Docker-API engine reachable")
    if shutil.which("podman") is None and shutil.which("docker") is None:
        pytest.skip("no container CLI")
    try:
        hk.ensure_image()
    except hk.HyperkernelUnavailable as exc:
        assert hk.UPSTREAM_IMAGE in str(exc)
    else:
        pytest.skip(f"{hk.JOB_IMAGE} is present on this engine")


@pytest.mark.container
def test_job_script_setup_in_a_real_container(tmp_path):
    """The job script run for real by the container sandbox (user nobody, no network,
    read-only root) in the Debian base image, with a Hyperkernel-like tree shipped in the
    job: the copy, the spec module and the link are made; the image has no python2, so the
    script stops at its probe (exit 91) and the parse is infra_error, never a verdict on
    the spec. Without the tree it stops at the copy (exit 90) naming the job image."""
    from harness.sandbox.container import ContainerSandbox, engine_reachable

    if not engine_reachable():
        pytest.skip("no Docker-API engine reachable")
    from harness.sandbox.container import connect

    client = connect()
    image = next((t for i in client.images.list() for t in i.tags if t.endswith("verikit-base:bookworm")), None)
    client.close()
    if image is None:
        pytest.skip("no verikit-base:bookworm image (scripts/make-base-image.sh)")
    v = hk.Hyperkernel()
    opts = v.options(syscall="sys_map_pml4", timeout_s=30)
    argv, env, _ = v.command(opts)
    spec = "\ndef sys_map_pml4(old):\n    return z3.BoolVal(True), old\n"
    tree = {f"hkroot/o.x86_64/hv6/hv6py/{rel}": "# stand-in\n"
            for rel in ("__init__.py", "kernel/__init__.py", "kernel/spec/main.py", "kernel/spec/spec/__init__.py",
                        "kernel/spec/spec/specs.py")}
    with ContainerSandbox(image) as sb:
        res = sb.run(argv, files={**v.files(spec), **tree}, env={**env, "VERIKIT_HK_ROOT": "hkroot"},
                     limits=Limits(wall_s=60), collect=[hk.SPEC_MODULE, "o.x86_64/hv6/hv6py/kernel/spec/main.py"])
        assert res.returncode == hk.EXIT_PROBE, (res.stdout, res.stderr)
        assert res.files[hk.SPEC_MODULE].decode() == hk.spec_module(spec)  # the candidate is in place
        assert res.files["o.x86_64/hv6/hv6py/kernel/spec/main.py"] == b"# stand-in\n"  # the tree was copied
        r = v.parse(res, opts)
        assert r.verdict == "infra_error" and "expected Hyperkernel/Z3 layout" in r.reason
        res = sb.run(argv, files=v.files(spec), env=env, limits=Limits(wall_s=60))
        assert res.returncode == hk.EXIT_SETUP and hk.JOB_IMAGE in res.stderr
        assert v.parse(res, opts).verdict == "infra_error"
