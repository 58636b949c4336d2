"""CASP: C-function / ACSL-specification pairs verified with Frama-C WP + RTE.

Paper: "CASP: a dataset of verified C code paired with ACSL specifications"
(../shared/papers/000_d6c7d26d38965c5d.txt): 506 pairs, each verified with Frama-C 30.0
WP + RTE, Z3 4.8.12 + Alt-Ergo 2.6.0 + CVC4 1.8, 500000 steps, 60 s per goal.

A task is one pair: ``prelude`` (the dependencies: includes, logic definitions, other
declarations), ``contract`` (the ACSL contract of the function), ``code`` (the function
definition, with its loop annotations). The gold file is ``spec.acsl + "\\n" + code.c``
exactly as the dataset stores it (``prelude + contract == spec.acsl``).

Modes (all on the same pairs):

- ``gold``: re-verify each pair; compare verdict and goal counts with the published ones.
- ``spec-from-code``: the candidate writes the contract. Verified file =
  prelude + the candidate's text up to the function + the task's function *verbatim*.
  The candidate's C code of the function must be token-identical to the task's
  (comments/annotations aside) or it is ``rejected``; a contract with no non-trivial
  ``ensures`` or with ``requires \\false`` is ``rejected``; WP smoke tests run and a
  failed smoke test (inconsistent contract) is ``rejected``.
- ``code-from-spec``: the candidate writes the function. Verified file = prelude + the
  task's contract *verbatim* + the candidate's function. A contract in the candidate that
  differs from the task's (up to layout) is ``rejected``; ACSL ``axiom``/``admit`` added
  by the candidate is ``rejected``; smoke tests run.

Canaries (DESIGN.md "Integrity"): each candidate mode also runs known-good and
known-cheat candidates on one task; a run whose canaries do not get their expected
verdicts is reported as invalid.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import datasets
from ..executor import Job, sha256_text
from ..sandbox import ProcResult
from ..verifiers import VerifierResult
from ..verifiers.framac import FramaC
from . import Candidate
from .cfront import (CSyntaxError, acsl_blocks, code_tokens, contracts_on_declarations, find_function,
                     function_name, normalize_acsl, preprocessor_lines)

framac_parser = FramaC()  # reads the study's recorded logs exactly as live runs are read

NAME = "casp"
VERSION = "1"
MODES = ("gold", "spec-from-code", "code-from-spec")
DATASETS = ("casp-sample10", "casp")
DEFAULT_DATASET = "casp-sample10"
VERIFIER = "framac"
SAMPLE_ROOT = "casp_10"
CANARY_TASK = "01_57"


@dataclass
class Task:
    """One CASP pair.

    Attributes:
        task_id: upstream id (sample: the directory name, e.g. ``00_327``; full dataset:
            the row index in the parquet file).
        function: name of the function the pair is about.
        prelude, contract, code: see the module docstring (``prelude + contract`` is the
            dataset's ACSL part, ``code`` its C part).
        published: the dataset's own verification data: ``verified`` (bool),
            ``verified_goals``, ``total_goals`` (Frama-C 30.0 counts), ``file_name``.
        sha256: hash of ``prelude + contract + code``.
    """

    task_id: str
    function: str
    prelude: str
    contract: str
    code: str
    published: dict = field(default_factory=dict)

    @property
    def spec(self) -> str:
        """The dataset's ACSL part (prelude + contract)."""
        return self.prelude + self.contract

    @property
    def gold(self) -> str:
        """The gold file: spec + newline + code, as the pair is stored."""
        return self.spec + "\n" + self.code

    @property
    def sha256(self) -> str:
        """sha256 of the pair's content."""
        return sha256_text(self.gold)


class TaskError(ValueError):
    """A pair cannot be read (names the file)."""


def split_spec(spec: str) -> tuple[str, str]:
    """Split the ACSL part into (prelude, contract): the contract is the last ACSL
    annotation when only whitespace follows it; otherwise there is no contract."""
    blocks = acsl_blocks(spec)
    if blocks and not spec[blocks[-1].end:].strip():
        return spec[: blocks[-1].start], spec[blocks[-1].start:]
    return spec, ""


def make_task(task_id: str, spec: str, code: str, published: dict, where: str) -> Task:
    """Build a :class:`Task`; ``where`` names the source for errors.

    Raises:
        TaskError: the code defines no function or cannot be lexed.
    """
    try:
        fn = function_name(code)
    except (ValueError, CSyntaxError) as exc:
        raise TaskError(f"{where}: {exc}") from exc
    prelude, contract = split_spec(spec)
    return Task(task_id=task_id, function=fn, prelude=prelude, contract=contract, code=code, published=published)


def _meta(text: str) -> dict:
    meta = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            v = v.strip()
            meta[k.strip()] = {"True": True, "False": False}.get(v, int(v) if v.isdigit() else v)
    return meta


def load_tasks(fetched: datasets.FetchedDataset) -> list[Task]:
    """Load the pairs of a fetched CASP dataset (``casp-sample10`` or ``casp``).

    Raises:
        TaskError: a pair is malformed (names the file).
    """
    files = fetched.files
    if fetched.dataset.name == "casp-sample10":
        dirs = sorted({p.split("/")[1] for p in files if p.startswith(SAMPLE_ROOT + "/")})
        tasks = []
        for d in dirs:
            base = f"{SAMPLE_ROOT}/{d}"
            spec = Path(files[f"{base}/spec.acsl"]).read_text()
            code = Path(files[f"{base}/code.c"]).read_text()
            meta = _meta(Path(files[f"{base}/meta.txt"]).read_text())
            tasks.append(make_task(d, spec, code, meta, files[f"{base}/code.c"]))
        return tasks
    import pyarrow.parquet as pq

    tasks = []
    for rel, path in sorted(files.items()):
        if not rel.endswith(".parquet"):
            continue
        table = pq.read_table(path).to_pylist()
        for i, row in enumerate(table):
            missing = [c for c in ("c_code_snippet", "acsl_snippet") if c not in row]
            if missing:
                raise TaskError(f"{path}: row {i}: missing column(s) {missing}")
            published = {k: row.get(k) for k in ("file_name", "verified", "verified_goals", "total_goals")}
            tasks.append(make_task(str(i), row["acsl_snippet"], row["c_code_snippet"], published, f"{path} row {i}"))
    return tasks


# --------------------------------------------------------------------------- candidates

_BUNDLED = re.compile(r"^code_with_llm_spec_(?P<provider>[^_]+)_(?P<model>.+)\.c$")


def bundled_candidates(fetched: datasets.FetchedDataset, mode: str) -> list[Candidate]:
    """The 40 LLM-written specifications shipped with casp-sample10 (spec-from-code only).

    Model names are ``<provider>/<model>`` (e.g. ``openai/gpt-5.2``), sample 0.
    """
    if mode != "spec-from-code" or fetched.dataset.name != "casp-sample10":
        return []
    out = []
    for rel, path in sorted(fetched.files.items()):
        parts = rel.split("/")
        m = _BUNDLED.match(parts[-1]) if len(parts) == 3 and parts[0] == SAMPLE_ROOT else None
        if m:
            out.append(Candidate(task_id=parts[1], model=f"{m['provider']}/{m['model']}", sample=0,
                                 output=Path(path).read_text(), origin=f"bundled:{rel}"))
    return out


def gold_candidates(tasks: list[Task], mode: str) -> list[Candidate]:
    """The gold solution of each task as a candidate for ``mode`` (model ``gold``)."""
    out = []
    for t in tasks:
        output = {"gold": t.gold, "spec-from-code": t.contract + "\n" + t.code, "code-from-spec": t.code}[mode]
        out.append(Candidate(task_id=t.task_id, model="gold", sample=0, output=output, origin="gold"))
    return out


def canaries(tasks: list[Task], mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
    """Known-good and known-cheat candidates with their expected verdicts.

    Returns:
        ``[(candidate, expected verdicts)]`` on task ``01_57`` (or the first task);
        empty for ``gold``.
    """
    if mode == "gold" or not tasks:
        return []
    t = next((t for t in tasks if t.task_id == CANARY_TASK), tasks[0])
    fn_sig = t.code[: t.code.index("{")]

    def c(name, output):
        return Candidate(task_id=t.task_id, model=f"canary:{name}", sample=0, output=output, origin="canary")

    if mode == "spec-from-code":
        return [
            (c("gold-contract", t.contract + "\n" + t.code), ("verified",)),
            (c("requires-false", "/*@ requires \\false;\n    ensures \\result == 0; */\n" + t.code), ("rejected",)),
            (c("inconsistent-requires", "/*@ requires 1 > 2;\n    assigns \\nothing;\n    ensures \\result == 0; */\n"
               + t.code), ("rejected",)),
            (c("no-ensures", "/*@ assigns \\nothing; */\n" + t.code), ("rejected",)),
            (c("body-changed", t.contract + "\n" + fn_sig + "{ return 0; }\n"), ("rejected",)),
        ]
    return [
        (c("gold-code", t.code), ("verified",)),
        (c("contract-changed", "/*@ assigns \\nothing; */\n" + t.code), ("rejected",)),
        (c("axiom", "/*@ axiomatic Cheat { axiom cheat: \\false; } */\n" + t.contract + "\n" + t.code), ("rejected",)),
        (c("admit", fn_sig + "{\n  //@ admit \\false;\n  return 0;\n}\n"), ("rejected",)),
        (c("wrong-code", fn_sig + "{ return 1; }\n"), ("failed",)),
    ]


# --------------------------------------------------------------------------- jobs

_TRIVIAL_ENSURES = re.compile(r"^\s*(\\true|true|1)\s*$")
_CLAUSE = re.compile(r"\b(requires|ensures)\b(.*?);", re.S)


def _contract_checks(contract_text: str) -> list[dict]:
    """A contract is trivial when it has no ``requires`` and no ``ensures`` other than
    ``\\true``: it then states nothing (``assigns`` alone is a frame, not a spec). A
    precondition-only contract is a safety contract, as CASP's own gold pairs use (02_12)."""
    clauses = [(k, normalize_acsl("/*@" + v + "*/")) for k, v in _CLAUSE.findall(contract_text)]
    stated = [v for k, v in clauses if not _TRIVIAL_ENSURES.match(v)]
    n_ens = sum(k == "ensures" for k, _ in clauses)
    n_req = sum(k == "requires" for k, _ in clauses)
    false_req = [v for k, v in clauses if k == "requires" and v.strip() in ("\\false", "false", "0")]
    return [
        {"name": "contract-not-trivial", "ok": bool(stated),
         "detail": f"{n_req} requires, {n_ens} ensures clause(s)" if stated
         else "no requires or ensures clause other than \\true"},
        {"name": "requires-not-false", "ok": not false_req,
         "detail": "requires \\false" if false_req else "no literal false precondition"},
    ]


def _keyword_check(name: str, text: str, keywords: tuple[str, ...]) -> dict:
    found = sorted({kw for b in acsl_blocks(text) for kw in keywords if re.search(rf"\b{kw}\b", b.text)})
    return {"name": name, "ok": not found, "detail": f"candidate ACSL uses {', '.join(found)}" if found else "none"}


def _candidate_text_checks(text: str) -> list[dict]:
    """Checks on the text a candidate adds to the verified file (both candidate modes):
    no preprocessor directive but ``#include`` (a macro can rewrite the fixed part), and
    no ACSL contract on a function declared without a body (trusted, never proved)."""
    pp = preprocessor_lines(text)
    trusted = contracts_on_declarations(text)
    return [
        {"name": "no-preprocessor-directives", "ok": not pp,
         "detail": f"candidate uses {pp[0]!r}" if pp else "only #include, if any"},
        {"name": "no-contract-on-declaration", "ok": not trusted,
         "detail": f"contract on body-less declaration of {', '.join(trusted)} (assumed, never proved)"
         if trusted else "none"},
    ]


def build_job(task: Task, cand: Candidate, mode: str, options: dict, dataset: dict) -> Job:
    """Turn (task, candidate, mode) into a :class:`Job` with its integrity checks.

    The candidate's text is never trusted to carry the task's fixed part: the verified
    file always takes the task's prelude, and the task's function (spec-from-code) or
    contract (code-from-spec) verbatim.
    """
    checks: list[dict] = []
    precheck = None
    source = None
    out = cand.output
    try:
        if mode == "gold":
            source = task.gold
        elif mode == "spec-from-code":
            fdef = find_function(out, task.function)
            if fdef is None:
                header = out if acsl_blocks(out) else ""
                checks.append({"name": "body-unchanged", "ok": True, "detail": "contract only; task's function used"})
            else:
                header = out[: fdef.start]
                same = code_tokens(out[fdef.start: fdef.end]) == code_tokens(task.code)
                checks.append({"name": "body-unchanged", "ok": same,
                               "detail": "C tokens identical to the task's function" if same
                               else "the candidate changed the C code of the function it must specify"})
            contract = find_function(header + task.code, task.function)
            checks += _contract_checks((contract.contract or "") if contract else "")
            checks.append(_keyword_check("no-admit", header, ("admit",)))
            checks += _candidate_text_checks(header)
            source = task.prelude + header + ("\n" if header and not header.endswith("\n") else "") + task.code
            if not header.strip():
                precheck = ("invalid", "the candidate contains no ACSL contract")
        elif mode == "code-from-spec":
            fdef = find_function(out, task.function)
            if fdef is None:
                precheck = ("invalid", f"the candidate defines no function {task.function}()")
            else:
                before = out[: fdef.contract_start]
                if fdef.contract is not None:
                    same = normalize_acsl(fdef.contract) == normalize_acsl(task.contract)
                    checks.append({"name": "contract-unchanged", "ok": same,
                                   "detail": "identical to the task's contract" if same
                                   else "the candidate's contract differs from the task's"})
                else:
                    checks.append({"name": "contract-unchanged", "ok": True, "detail": "no contract; task's used"})
                added = before + out[fdef.start: fdef.end]
                checks.append(_keyword_check("no-axiom-or-admit", added, ("axiom", "axiomatic", "admit")))
                checks += _candidate_text_checks(added)
                source = (task.prelude + before + task.contract + "\n" + out[fdef.start: fdef.end] + "\n")
        else:
            raise ValueError(f"unknown CASP mode {mode!r}; modes: {', '.join(MODES)}")
    except CSyntaxError as exc:
        precheck = ("invalid", f"candidate cannot be lexed: {exc}")
    failed = [c for c in checks if not c["ok"]]
    if precheck is None and failed:
        precheck = ("rejected", "; ".join(f"{c['name']}: {c['detail']}" for c in failed))
    return Job(
        benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode,
        task_id=task.task_id, task_sha256=task.sha256,
        candidate={"model": cand.model, "sample": cand.sample, "sha256": sha256_text(cand.output),
                   "origin": cand.origin},
        files={"candidate.c": source or ""}, options=options, checks=checks, precheck=precheck,
    )


def judge(job: Job, result: VerifierResult) -> tuple[str, str]:
    """Final verdict: a failed WP smoke test means an inconsistent contract -> ``rejected``."""
    if result.vacuous and result.verdict in ("verified", "failed"):
        return "rejected", f"vacuous: smoke test(s) failed ({', '.join(result.vacuous[:3])}): " \
                           f"the precondition or the code is inconsistent"
    return result.verdict, result.reason


def smoke_tests(mode: str) -> bool:
    """Smoke tests run for candidate modes only (the paper's gold protocol has none)."""
    return mode != "gold"


# --------------------------------------------------------------------------- published

def study_results(fetched: datasets.FetchedDataset) -> dict[tuple[str, str], dict]:
    """Per-candidate results of the CASP-LLM-Verification-Study (``framac_results.csv``).

    Returns:
        ``{(task_id, "<provider>/<model>"): {"verdict", "proved", "total", "returncode"}}``;
        their protocol: the candidate file alone (no task dependencies), ``frama-c -wp
        -wp-rte -wp-prover alt-ergo`` with default timeout, Alt-Ergo 2.4.3.
    """
    path = fetched.files.get("framac_results.csv")
    if not path:
        return {}
    out = {}
    for row in csv.DictReader(io.StringIO(Path(path).read_text())):
        rc = int(row["returncode"])
        proved = int(float(row["proved_goals"])) if row["proved_goals"] else None
        total = int(float(row["total_goals"])) if row["total_goals"] else None
        verdict = "invalid" if rc != 0 else ("verified" if proved == total else "failed")
        entry = {"verdict": verdict, "proved": proved, "total": total, "returncode": rc, "reason": ""}
        log = fetched.files.get(f"{SAMPLE_ROOT}/{row['directory']}/framac_log_{row['provider']}_{row['model']}.log")
        if log:  # the study's own Frama-C log, read with the same parser as live runs
            body = Path(log).read_text().split("# --- Begin frama-c output ---\n", 1)[-1]
            entry["reason"] = framac_parser.parse(ProcResult(argv=[], returncode=rc, stdout=body)).reason
        out[(row["directory"], f"{row['provider']}/{row['model']}")] = entry
    return out
