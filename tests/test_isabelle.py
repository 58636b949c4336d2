"""Tests of harness/verifiers/isabelle.py.

Isabelle2024 cannot be installed here, so:

- ``recorded``: ``parse`` on real ``isabelle build`` outputs stored in
  tests/recorded/isabelle/ (each with a ``.provenance.json`` sidecar). No real output of
  ``thm_oracles`` as printed by the log tool was found: the verified path is covered by
  the module's documented format only, never by a made-up transcript;
- the task-file functions (``theorem``, ``declared_axioms``, ``splice``, ``job_files``) on
  all 600 real NTP4VC Isabelle theories of the data mirror (``VERIKIT_DATA_MIRRORS``;
  skipped when unset);
- the command line and options, which need no tool output.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path, PurePosixPath

import pytest

from harness.model import ProcResult, termination
from harness.registry import verifier as get_verifier
from harness.benchmarks.ntp4vc.data import ISABELLE_SESSION_DIRS as SESSION_DIRS
from harness.verifiers.isabelle import (PARENT_SESSION, SESSION, Isabelle, blank, header_imports,
                                        oracle_reports, theory_name)
from harness.verifiers.proof import statement_sha256

RECORDED = Path(__file__).parent / "recorded" / "isabelle"
IMAGE_ROOT = "/opt/ntp4vc"
ISA = Isabelle()


@pytest.fixture(scope="module")
def tasks(ntp4vc_task_files) -> list[tuple[str, str]]:
    return ntp4vc_task_files("isabelle")


def _recorded(name: str) -> str:
    text = (RECORDED / name).read_text(encoding="utf-8")
    meta = json.loads((RECORDED / f"{name}.provenance.json").read_text())
    assert meta["source"] and meta["tool_version"]
    return text


def _run(stdout: str, returncode: int = 0, **flags) -> ProcResult:
    return ProcResult(argv=["sh"], returncode=returncode, stdout=stdout, **flags)


# --- task files (all 600 real NTP4VC theories) ----------------------------------------------

@pytest.mark.slow
def test_theorem_on_all_600_tasks(tasks):
    assert len(tasks) == 600
    for rel, text in tasks:
        th = ISA.theorem(text, rel)
        assert text[th.start:th.end] == "sorry", rel
        assert text[th.end:].split() == ["end"], rel
        assert re.fullmatch(r"[A-Za-z][\w']*", th.name), (rel, th.name)
        assert th.statement.startswith(f"theorem {th.name}:") and "shows" in th.statement
        assert th.statement_sha256 == statement_sha256(th.statement.replace("\n", "\n  "))
        assert text.splitlines()[th.line - 1].startswith("theorem"), rel
        assert PurePosixPath(rel).stem == theory_name(text), rel


@pytest.mark.slow
def test_declared_axioms_on_all_600_tasks(tasks):
    total = 0
    for rel, text in tasks:
        expected = set(re.findall(r"^axiomatization where ([^\s:]+):", text, re.M))
        assert ISA.declared_axioms(text) == expected, rel
        total += len(expected)
    assert total == 1001


@pytest.mark.slow
def test_job_files_on_all_600_tasks(tasks):
    for rel, text in tasks:
        th = ISA.theorem(text, rel)
        task_dir = f"{IMAGE_ROOT}/{PurePosixPath(rel).parent}"
        files = ISA.job_files(text, th, "by auto", task_dir=task_dir)
        thy = theory_name(text)
        assert set(files) == {"ROOT", f"{thy}.thy"}
        spliced, root = files[f"{thy}.thy"], files["ROOT"]
        assert "sorry" not in blank(spliced) and spliced.rstrip().endswith(f"by auto\n\nthm_oracles {th.name}\n\nend")
        imports = [name for _, _, name in header_imports(spliced)]
        assert all(i.startswith(IMAGE_ROOT + "/") or "/" not in i for i in imports), rel
        assert f'session "{SESSION}" = "{PARENT_SESSION}" +' in root and f'theories "{thy}"' in root
        for i in imports:
            if i.startswith("/"):
                assert f'"{PurePosixPath(i).parent}"' in root
            elif "." in i and not i.startswith(PARENT_SESSION + "."):
                assert f'"{i.split(".")[0]}"' in root
        # the statement is untouched: the spliced theory has the same theorem
        assert ISA.theorem(spliced.replace("by auto", "sorry").replace(f"\n\nthm_oracles {th.name}", ""),
                           rel).statement_sha256 == th.statement_sha256


def test_relative_imports_resolved():
    text = 'theory T\n  imports "NTP4Verif.NTP4Verif" "../../lib/isabelle/A_A" "./B" (* "../x/C" *) Main\nbegin\n' \
           'theorem g: shows "True"\n  sorry\nend\n'
    th = ISA.theorem(text, "T.thy")
    out = ISA.splice(text, th, "by simp", task_dir="/opt/p/d/e_vcg/isabelle")
    assert '"/opt/p/d/lib/isabelle/A_A" "/opt/p/d/e_vcg/isabelle/B" (* "../x/C" *) Main' in out
    assert ISA.splice(text, th, "by simp").startswith(text[:th.start])  # no task_dir: unchanged


def test_theorem_errors_name_file_and_line():
    base = 'theory T imports Main begin\ntheorem g: "True"\n  sorry\nend\n'
    assert ISA.theorem(base, "T.thy").name == "g"
    with pytest.raises(ValueError, match=r"^T\.thy:4: expected exactly one theorem, found 2"):
        ISA.theorem(base.replace("  sorry\n", '  sorry\nlemma h: "True"\n  sorry\n'), "T.thy")
    with pytest.raises(ValueError, match=r"^T\.thy:2: expected exactly one 'sorry'"):
        ISA.theorem(base.replace("sorry", "by simp"), "T.thy")
    with pytest.raises(ValueError, match=r"^T\.thy:2: the theorem has no name"):
        ISA.theorem(base.replace("theorem g:", "theorem"), "T.thy")
    with pytest.raises(ValueError, match=r"^T\.thy:4: the theorem's proof must be 'sorry' alone"):
        ISA.theorem(base.replace("  sorry", "  apply simp\n  sorry"), "T.thy")
    with pytest.raises(ValueError, match=r"^T\.thy:1: unterminated comment"):
        ISA.theorem("(* open\n" + base, "T.thy")
    # comments, strings and cartouches do not count
    th = ISA.theorem('theory T imports Main begin\n(* lemma x: sorry *)\ntext \\<open>sorry\\<close>\n'
                     'theorem g: "sorry = sorry"\n  sorry\nend\n', "T.thy")
    assert th.line == 4 and th.statement == 'theorem g: "sorry = sorry"'


def test_declared_axioms_forms():
    text = ('axiomatization f :: "nat => nat" where f_def: "f x = x" and f_mono [simp]: "mono f"\n'
            '  for x :: nat and y :: nat\naxiomatization where A: "True"\nconsts c :: nat\n'
            '(* axiomatization where B: "False" *)\n')
    assert ISA.declared_axioms(text) == {"f_def", "f_mono", "A"}


# --- forbidden -------------------------------------------------------------------------

@pytest.mark.parametrize("proof, finding", [
    ("sorry", "sorry"),
    ("proof -\n  show ?thesis sorry\nqed", "sorry"),
    ("by auto\noops", "oops"),
    ("\\<proof>", "\\<proof>"),
    ("using [[quick_and_dirty]] by auto", "quick_and_dirty"),
    ("using [[smt_oracle]] by smt", "smt_oracle"),
    ("by (tactic \\<open>Skip_Proof.cheat_tac @{context} 1\\<close>)", "tactic"),
    ("apply (rule Skip_Proof.cheat_tac)", "Skip_Proof"),
    ("by auto\nML \\<open>writeln \"oracles:\"\\<close>", "ML"),
    ("by auto\nsetup \\<open>I\\<close>", "setup"),
    ("by auto\n\naxiomatization where bad: \"False\"", "axiomatization"),
    ("by auto\nend\ntheory Other", "end"),
    ("by auto\nlemma other: \"False\" by auto", "lemma"),
    ("by auto\ndeclare [[ML_exception_trace]]", "declare"),
    ("by auto\nthm_oracles goal0", "thm_oracles"),
    ("txt \\<open>@{ML \\<open>()\\<close>}\\<close> by auto", "@{ML"),
    ("by auto (* never closed", "unterminated comment"),
    ("by (simp add: \\<open>x)", "unterminated cartouche"),
])
def test_forbidden_findings(proof, finding):
    found = ISA.forbidden(proof)
    assert any(finding in f for f in found), found


@pytest.mark.parametrize("proof", [
    "by (auto simp: Let_def split: if_splits)",
    "proof -\n  have \"x = x\" by simp \\<comment> \\<open>sorry, not really\\<close>\n  (* oops *)\n"
    "  then show ?thesis by (smt (verit) comm_monoid_add_class.add_0)\nqed",
    "apply (induct xs)\n  apply simp\n by (metis append.simps(2))",
])
def test_forbidden_accepts_ordinary_proofs(proof):
    assert ISA.forbidden(proof) == []


# --- command line ------------------------------------------------------------------------

class _Probed:
    versions = {"isabelle": "Isabelle2024"}


def test_options_never_quick_and_dirty():
    opts = ISA.options(_Probed(), theorem="goal0", theory="T", threads=4, timeout_s=300)
    assert opts["quick_and_dirty"] is False and opts["verifier_module"] == "isabelle/1"
    assert opts["isabelle_version"] == "Isabelle2024"
    for bad in (True, "true", 1):
        with pytest.raises(ValueError, match="quick_and_dirty"):
            ISA.options(_Probed(), quick_and_dirty=bad)
    assert ISA.options(_Probed(), quick_and_dirty=False)["quick_and_dirty"] is False


def test_command_line():
    opts = ISA.options(_Probed(), threads=4, timeout_s=300, session_dirs=list(SESSION_DIRS))
    argv, env, collect = ISA.command(opts)
    assert argv[:2] == ["sh", "-c"] and env == {} and collect == []
    build, logs, tail = argv[2].split("; ", 2)[0], argv[2].split("; ")[2], argv[2].split("; ")[-1]
    assert shlex.split(build) == ["isabelle", "build", "-o", "quick_and_dirty=false", "-o", "timeout=300",
                                  "-o", "threads=4", *sum((["-d", d] for d in SESSION_DIRS), []),
                                  "-d", ".", SESSION]
    assert logs == f"isabelle log -v -U {SESSION} || isabelle build_log -v -U {SESSION}"
    assert tail == "exit $rc" and "rc=$?" in argv[2]
    assert "quick_and_dirty=true" not in argv[2] and "-o quick_and_dirty " not in argv[2]
    assert get_verifier("isabelle").name == "isabelle" and ISA.toolchain == "isabelle"


# --- parse: real recorded outputs ----------------------------------------------------------

@pytest.mark.recorded
def test_parse_recorded_failed_build():
    log = _recorded("utp-main-issue3.build.out")
    res = ISA.parse(_run(log, returncode=2), {"theory": "utp_csp", "theorem_line": 10})
    assert res.verdict == "invalid"
    assert res.reason == 'utp_csp.thy:349: Undefined fact: "list_minus_anhil"'
    assert res.extra["task_loads"] is True and any("At command" in m for m in res.messages)
    res = ISA.parse(_run(log, returncode=2), {"theory": "utp_csp", "theorem_line": 400})
    assert res.verdict == "invalid" and not res.extra["task_loads"]
    # the error is in another theory than the task's: the image's library is broken
    res = ISA.parse(_run(log, returncode=2), {"theory": "Candidate"})
    assert res.verdict == "infra_error" and "library theory" in res.reason
    assert oracle_reports(log) == []


@pytest.mark.recorded
def test_parse_recorded_clean_build_without_report_is_rejected():
    log = _recorded("tlapm-pr109.build.out")
    res = ISA.parse(_run(log), {"theory": "T"})
    assert res.verdict == "rejected" and "no thm_oracles report" in res.reason
    assert res.extra["assumptions"] == []


@pytest.mark.recorded
def test_parse_recorded_failure_markers_without_errors_are_infra():
    # the tail of the recorded failure without its *** lines: failed, nothing to blame
    tail = "\n".join(line for line in _recorded("utp-main-issue3.build.out").splitlines()
                     if not line.startswith("***"))
    res = ISA.parse(_run(tail, returncode=2), {"theory": "utp_csp"})
    assert res.verdict == "infra_error" and "without an error message" in res.reason


# --- parse: run-level outcomes (no tool output involved) ------------------------------------

def test_parse_run_level_outcomes():
    # the sandbox's endings are mapped before parse, as the executor does
    def reading(proc):
        return termination(proc, ISA.name) or ISA.parse(proc)

    assert reading(ProcResult(argv=["sh"], returncode=None, start_error="sh: not found")).verdict == "infra_error"
    assert reading(_run("", returncode=-9, timed_out=True, wall_s=600.0)).verdict == "timeout"
    assert reading(_run("", returncode=-9, memout=True, max_rss_mb=9000)).verdict == "memout"
    assert ISA.parse(_run("", output_truncated=True)).verdict == "failed"
    assert ISA.parse(_run("", returncode=1)).verdict == "infra_error"
    res = ISA.parse(_run("", returncode=0))
    assert res.verdict == "rejected" and "no thm_oracles report" in res.reason


def test_strings_inside_comments_are_not_special():
    """Isabelle's outer comments ``(* *)`` nest and have no strings inside
    (``Symbol_Pos.scan_comment``: nesting only), unlike Coq's: ``"(*"`` inside one opens a
    nested comment, so the sorry is commented out for Isabelle too, and the shared helper
    (``proof.nested_end`` without ``quote``) agrees."""
    assert blank('(* "(*" *) sorry *) by simp').strip() == "by simp"
    assert blank('(* " *) sorry').strip() == "sorry"
