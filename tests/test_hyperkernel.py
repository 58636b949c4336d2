"""Tests of harness/verifiers/hyperkernel (OSVBench's Hyperkernel verifier: the tool only).

The verifier's image (``lsysimpure/osvbench:001``: Python 2.7, LLVM 5.0, Z3 4.5.0) cannot
be had on this machine (no Docker Hub), so the parser is tested on the recorded real
output of the published run (``outputs/output_claude3sonnet_Spec`` of the pinned
``osvbench`` dataset; tests marked ``recorded``), all 245 entries. The command line and
the job script are checked as text, with ``sh -n``, and for real in a container of the
Debian base image with a Hyperkernel-like tree (``container``): nothing model-written runs
here."""

from __future__ import annotations

import ast
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from harness import registry
from harness.benchmarks import osvbench
from harness.model import Limits, ProcResult, Verifier, termination
from harness.verifiers import hyperkernel as hk

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fetched(osvbench_fetched):
    return osvbench_fetched


@pytest.fixture(scope="module")
def recorded(fetched):
    """task_id -> (task, published spec, recorded log entry)."""
    tasks = osvbench.load_benchmark(fetched).tasks
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


def opts(syscall: str, **kw) -> dict:
    v = hk.Hyperkernel()
    return v.task_options(v.options(None, **kw), syscall)


# --- the interface and the command line ---------------------------------------------------

def test_registered_and_implements_the_verifier_interface():
    v = registry.verifier("hyperkernel")
    assert isinstance(v, hk.Hyperkernel) and isinstance(v, Verifier)
    assert (v.name, v.toolchain, v.version) == ("hyperkernel", "hyperkernel", hk.MODULE_VERSION)
    assert v.prepare(None, None) == {}  # the job script travels in each job's files (part of the key)


def test_imports_only_the_vocabulary():
    """The verifier knows its tool: no executor, metrics, benchmark, sandbox or subprocess."""
    tree = ast.parse(Path(hk.__file__).read_text())
    mods = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            mods.add("." * node.level + (node.module or ""))
    assert mods == {"__future__", "re", "dataclasses", "pathlib", "...model"}


def test_options_command_and_files():
    v = hk.Hyperkernel()
    run_opts = v.options(None)
    assert run_opts == {"timeout_s": 600.0, "verifier_module": f"hyperkernel/{hk.MODULE_VERSION}"}
    o = v.task_options(run_opts, "sys_map_pml4")
    assert o == {**run_opts, "syscall": "sys_map_pml4"} and "syscall" not in run_opts
    argv, env, collect = v.command(o)
    assert argv == ["/bin/sh", "verikit_hyperkernel.sh", "sys_map_pml4", "600"] and collect == []
    assert env["VERIKIT_HK_ROOT"] == "/root/hyperkernel"
    assert env["VERIKIT_Z3_PYTHON"] == "/root/Projects/z3-z3-4.5.0/build/python"  # OSVBench Dockerfile ENV
    assert v.command(v.task_options(v.options(None, timeout_s=45), "sys_x"))[0][3] == "45"
    files = v.files("\ndef sys_map_pml4(old):\n    return z3.BoolVal(True), old\n")
    assert files["specs.py"] == hk.SPEC_HEADER + "\ndef sys_map_pml4(old):\n    return z3.BoolVal(True), old\n" + "\n"
    assert files["verikit_hyperkernel.sh"] == hk.JOB_SCRIPT
    for bad in ("sys_x; rm -rf /", "", "../x"):
        with pytest.raises(ValueError, match="bad syscall name"):
            v.task_options(run_opts, bad)
    with pytest.raises(ValueError, match="need the task's syscall"):
        v.command(run_opts)
    with pytest.raises(ValueError, match="timeout_s must be > 0"):
        v.options(None, timeout_s=0)


def test_job_script_is_a_file_valid_sh_and_runs_upstreams_command(tmp_path):
    assert hk.JOB_SCRIPT == (Path(hk.__file__).parent / "job.sh").read_text()
    script = tmp_path / hk.SCRIPT_FILE
    script.write_text(hk.JOB_SCRIPT)
    proc = subprocess.run(["/bin/sh", "-n", str(script)], capture_output=True, text=True)  # parse only
    assert proc.returncode == 0, proc.stderr
    s = hk.JOB_SCRIPT
    # the command make runs for "make hv6-verify -- -v --failfast HV6.test_<syscall>" (hv6/Makefrag)
    assert f'python2 {hk.MAIN} -v --failfast "HV6.test_$syscall"' in s
    assert 'PYTHONPATH="$z3py:irpy:o.x86_64/hv6/:$hk/o.x86_64/hv6/"' in s
    assert f"cp {hk.SPEC_FILE} {hk.SPEC_MODULE}" in s and f"rm -f {hk.SPEC_MODULE}c" in s
    assert f'hk="${{VERIKIT_HK_ROOT:-{hk.HK_ROOT}}}"' in s and f'z3py="${{VERIKIT_Z3_PYTHON:-{hk.Z3_PYTHON}}}"' in s
    assert 'exec timeout -k 10 "$limit" python2' in s  # a real time limit inside the container
    assert f"exit {hk.EXIT_SETUP}" in s and f"exit {hk.EXIT_PROBE}" in s
    assert "verikit-probe: python %d.%d.%d z3 %s" in s  # what parse reads the versions from


def test_spec_header_is_upstreams_and_compiles():
    compile(hk.SPEC_HEADER, "specs.py", "exec")  # imports only: valid in Python 2 and 3
    assert hk.SPEC_HEADER.startswith("\n#\n# Copyright 2017 Hyperkernel Authors\n")
    assert hk.SPEC_HEADER.endswith("        is_pn_valid,\n)\n\n")
    assert hk.SPEC_HEADER_LINES == 34


# --- parsing the recorded output -----------------------------------------------------------

@pytest.mark.recorded
def test_parse_every_recorded_entry(recorded):
    """All 245 recorded checks: the verdict follows upstream's class (pass -> verified,
    semantic -> failed, syntax -> invalid), and the classification is in ``extra``."""
    v = hk.Hyperkernel()
    verdicts = Counter()
    for tid, (task, spec, entry) in recorded.items():
        r = v.parse(proc_of(entry), opts(task.syscall))
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
    r = v.parse(proc_of(e), opts("sys_copy_frame"))
    assert r.verdict == "invalid" and r.extra["exception"] == "AssertionError" and r.extra["raised_in"] == "hv6py"
    assert r.extra["outcome"] == "FAIL" and r.extra["spec_line"] == 61 - hk.SPEC_HEADER_LINES
    assert r.extra["spec_code"] == "new.pages[to].data = lambda idx, oldfn: old.pages[frm].data(idx)"
    _, _, e = recorded["141"]  # the one real SyntaxError: the module does not compile
    r = v.parse(proc_of(e), opts("send_proc"))
    assert (r.verdict, r.extra["kind"], r.extra["outcome"]) == ("invalid", "python_syntax", None)
    _, _, e = recorded["9"]  # sys_free_pd: Z3 counterexample
    r = v.parse(proc_of(e), opts("sys_free_pd"))
    assert r.verdict == "failed" and r.extra["cause"] == "counterexample" and r.extra["upstream_class"] == "semantic"
    assert "Could not prove" in r.extra["output_excerpt"] and "[... " in r.extra["output_excerpt"]


@pytest.mark.recorded
def test_parse_fails_closed(recorded):
    v = hk.Hyperkernel()
    o = opts("sys_map_page_desc")
    _, _, ok = recorded["0"]
    assert v.parse(proc_of(ok), o).verdict == "verified"
    # the ok line printed, but the run exited non-zero: never verified
    assert v.parse(proc_of(ok, returncode=1), o).verdict == "infra_error"
    # a passing line for another syscall's test is not this task's outcome
    assert v.parse(proc_of(ok), opts("sys_map_proc")).verdict != "verified"
    r = v.parse(ProcResult(argv=[], returncode=90, stderr="verikit: cannot copy /root/hyperkernel/o.x86_64/hv6/hv6py"),
                o)
    assert r.verdict == "infra_error" and "expected Hyperkernel/Z3 layout" in r.reason
    assert v.parse(ProcResult(argv=[], returncode=91, stderr="ImportError: No module named z3"), o).verdict \
        == "infra_error"
    r = v.parse(ProcResult(argv=[], returncode=0, stdout=""), o)
    assert r.verdict == "infra_error" and r.extra["kind"] == "no_test_result"


def test_timeouts_the_tools_and_the_sandboxs():
    """Exit 124 is the job script's timeout(1): the verifier's own reading. The sandbox's
    endings (wall time, memory, could not start) are mapped before parse, by
    :func:`harness.model.termination` (the executor), never by the verifier."""
    v = hk.Hyperkernel()
    o = opts("sys_kill", timeout_s=30)
    r = v.parse(ProcResult(argv=[], returncode=124, stdout="Using z3 v4.5.0.0\n"), o)
    assert r.verdict == "timeout" and r.reason == "no result within 30 s"
    assert r.extra["upstream_class"] == "semantic" and r.extra["cause"] == "timeout" and r.extra["z3_version"] == "4.5.0.0"
    for proc, verdict in ((ProcResult(argv=[], returncode=-9, timed_out=True, wall_s=90), "timeout"),
                          (ProcResult(argv=[], returncode=137, memout=True), "memout"),
                          (ProcResult(argv=[], returncode=None, start_error="no such image"), "infra_error")):
        assert termination(proc, v.name).verdict == verdict
        assert v.parse(proc, o).verdict != "verified"  # were it read anyway: never a pass
    assert termination(ProcResult(argv=[], returncode=124), v.name) is None  # the tool's own exit: parse reads it


def test_probe_line_gives_versions():
    v = hk.Hyperkernel()
    r = v.parse(ProcResult(argv=[], returncode=0, stderr="verikit-probe: python 2.7.12 z3 4.5.0.0\n"), opts("sys_x"))
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
    names = ["sys_a", "sys_b"]
    doubled = hk.split_upstream_log("".join(f"\nSyscall {n}:\nx\n" for n in names * 2))
    assert hk.repeated_runs(doubled, names) == 2 and hk.repeated_runs(doubled[:3], names) == 0


def test_excerpt_keeps_head_and_tail():
    text = "H" * 3000 + "M" * 5000 + "T" * 5000
    ex = hk.excerpt(text)
    assert ex.startswith("H" * 2000) and ex.endswith("T" * 4000) and "[... 7000 characters left out ...]" in ex
    assert hk.excerpt("short") == "short"


# --- the job script for real -------------------------------------------------------------------

@pytest.mark.container
def test_job_script_setup_in_a_real_container(engine_image):
    """The job script run for real by the container sandbox (user nobody, no network,
    read-only root) in the Debian base image, with a Hyperkernel-like tree shipped in the
    job: the copy, the spec module and the link are made; the image has no python2, so the
    script stops at its probe (exit 91) and the parse is infra_error, never a verdict on
    the spec. Without the tree it stops at the copy (exit 90) naming the job image."""
    from harness.sandbox import SandboxError
    from harness.sandbox.container import ContainerSandbox, connect

    def base_image() -> str:
        client = connect()
        try:
            tag = next((t for i in client.images.list() for t in i.tags if t.endswith("verikit-base:bookworm")), None)
        finally:
            client.close()
        if tag is None:
            raise SandboxError("no verikit-base:bookworm image (scripts/make-base-image.sh)")
        return tag

    image = engine_image(base_image)
    v = hk.Hyperkernel()
    o = opts("sys_map_pml4", timeout_s=30)
    argv, env, _ = v.command(o)
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
        r = termination(res, v.name) or v.parse(res, o)
        assert r.verdict == "infra_error" and "expected Hyperkernel/Z3 layout" in r.reason
        res = sb.run(argv, files=v.files(spec), env=env, limits=Limits(wall_s=60))
        assert res.returncode == hk.EXIT_SETUP and "verikit images build hyperkernel-osvbench" in res.stderr
        assert (termination(res, v.name) or v.parse(res, o)).verdict == "infra_error"
