"""OSVBench metrics of a run: pass@k, the paper's categories, the finer causes, pass@1 per
bug type (report sections), the per-task comparison with the published log, and the
upstream-format log of a run.

Everything here reads result records (``task_id``, ``candidate.model``/``sample``/``sha256``,
``verdict``, ``verifier.extra`` as :class:`harness.verifiers.hyperkernel.Hyperkernel`
fills it); canary records (model ``canary:<name>``) are left out of the metrics (the
runner reports them on their own).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ...metrics import mean_pass_at_k
from ...results import is_canary
from ...verifiers import hyperkernel
from .tasks import BUG_TYPES, CORRECT, Task
from ...model import Record

#: The k of pass@k reported (the paper reports pass@1; 3 and 5 when n allows).
PASS_AT_K = (1, 3, 5)
#: The paper's category of a record whose output the verifier did not read (the sandbox
#: stopped it): upstream's rule calls a "Timeout" semantic and anything else that is not
#: "... ok" a syntax error.
_CLASS_OF_VERDICT = {"verified": "pass", "failed": "semantic", "timeout": "semantic", "invalid": "syntax",
                     "memout": "syntax"}
#: The kit's verdict for the finer kind of a published log entry.
_VERDICT_OF_KIND = {"verified": "verified", "counterexample": "failed", "timeout": "timeout",
                    "python_syntax": "invalid", "python_exception": "invalid", "z3_exception": "invalid",
                    "no_test_result": "infra_error"}


def record_class(record: dict) -> str:
    """The paper's category of a record: ``pass`` | ``semantic`` | ``syntax`` (upstream's
    stats.py rule on its output, ``verifier.extra.upstream_class``; from the verdict when
    the sandbox stopped the job), or ``rejected`` / ``infra_error`` (no check ran)."""
    verdict = record["verdict"]
    if verdict in ("rejected", "infra_error"):
        return verdict
    extra = record["verifier"].get("extra") or {}
    return extra.get("upstream_class") or _CLASS_OF_VERDICT.get(verdict, "syntax")


def pass_at_k(records: list[Record], ks: tuple[int, ...] = PASS_AT_K) -> dict:
    """pass@k per model with the unbiased estimator (Chen et al. 2021,
    :func:`harness.metrics.mean_pass_at_k`) from n samples per task.

    ``records``: result records (``task_id``, ``candidate.model``, ``verdict``);
    ``infra_error`` records are left out (ours, not the model's) and counted. A k larger
    than some task's n is reported as None with the reason (never estimated from fewer
    samples). Upstream's runner stops at the first passing sample, so it can only give
    "any of n"; here every sample counts.

    Returns:
        ``{model: {"tasks", "samples_per_task": {"min", "max"}, "infra_error",
        "pass_at_k": {"k": value or None}, "notes"}}``.
    """
    per: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    infra: Counter = Counter()
    for r in records:
        model = r["candidate"]["model"]
        if r["verdict"] == "infra_error":
            infra[model] += 1
            continue
        nc = per[model][r["task_id"]]
        nc[0] += 1
        nc[1] += r["verdict"] == "verified"
    out = {}
    for model, tasks in sorted(per.items()):
        ns = [n for n, _ in tasks.values()]
        res, notes = {}, []
        for k in ks:
            if k > min(ns):
                res[str(k)] = None
                notes.append(f"pass@{k} needs {k} samples for every task; the fewest is {min(ns)}")
            else:
                res[str(k)] = mean_pass_at_k({t: (n, c) for t, (n, c) in tasks.items()}, k)
        out[model] = {"tasks": len(tasks), "samples_per_task": {"min": min(ns), "max": max(ns)},
                      "infra_error": infra[model], "pass_at_k": res, "notes": notes}
    return out


def per_model(records: list[Record], tasks: list[Task]) -> dict:
    """Per model: ``samples``; ``classes`` (the paper's categories over all samples,
    :func:`record_class`); ``causes`` (the finer cause of each sample: ``verified``,
    ``counterexample``, ``timeout``, the exception class..., or the verdict when the
    verifier gave none); ``pass_at_1_percent_by_bug_type`` (per Table 1 column, with
    upstream's exact-spelling rule: mean over the column's tasks of c/n, in percent, 2
    decimals; None for a column without tasks)."""
    by_id = {t.task_id: t for t in tasks}
    out = {}
    for model in sorted({r["candidate"]["model"] for r in records}):
        recs = [r for r in records if r["candidate"]["model"] == model]
        classes: Counter = Counter()
        causes: Counter = Counter()
        nc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in recs:
            classes[record_class(r)] += 1
            causes[(r["verifier"].get("extra") or {}).get("cause") or r["verdict"]] += 1
            if r["verdict"] != "infra_error":
                nc[r["task_id"]][0] += 1
                nc[r["task_id"]][1] += r["verdict"] == "verified"
        cols = {}
        for col in BUG_TYPES + (CORRECT,):
            ids = [tid for tid in nc if tid in by_id and col in by_id[tid].upstream_bug_columns]
            cols[col] = round(100 * sum(nc[i][1] / nc[i][0] for i in ids) / len(ids), 2) if ids else None
        out[model] = {"samples": len(recs), "classes": dict(classes), "causes": dict(causes.most_common()),
                      "pass_at_1_percent_by_bug_type": cols}
    return out


def report_sections(records: list[Record], tasks: list[Task], modes=(), *, seed: int = 0,
                    ks: tuple[int, ...] = PASS_AT_K) -> dict:
    """The sections of report.json (what upstream's ``summary.json`` had): ``pass_at_k``
    (:func:`pass_at_k`) and ``per_model`` (:func:`per_model`), canaries left out (the
    one mode; ``seed`` is not used: no interval is drawn)."""
    recs = [r for r in records if not is_canary(r["candidate"]["model"])]
    return {"pass_at_k": pass_at_k(recs, ks), "per_model": per_model(recs, tasks)}


def upstream_log(records: list[Record], tasks: list[Task]) -> str:
    """An upstream-format verifier log (``outputs/output_<name>``, readable by upstream's
    ``stats.py``): one entry per task that has records, in benchmark order, canaries
    left out; per task the first verified sample, else the last sample (the entry
    upstream's runner would have written), ``"\\nSyscall <name>:\\n" + output``. A
    timeout is written ``Error: Timeout.`` (what upstream's runner meant to write).
    Records keep an excerpt of a job's output (head and tail), so long entries are
    shortened in the middle; a rejected spec (never run) has no output."""
    by_task: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        if not is_canary(r["candidate"]["model"]):
            by_task[r["task_id"]].append(r)
    parts = []
    for t in tasks:
        recs = sorted(by_task.get(t.task_id, []), key=lambda r: (r["candidate"]["model"], r["candidate"]["sample"]))
        if not recs:
            continue
        chosen = next((r for r in recs if r["verdict"] == "verified"), recs[-1])
        body = (chosen["verifier"].get("extra") or {}).get("output_excerpt") or chosen["verifier"].get("log_tail", "")
        if chosen["verdict"] == "timeout":
            body = "Error: Timeout.\n"
        parts.append("\nSyscall " + t.syscall + ":\n" + body)  # spec_util.py: header + stdout + "\n" + stderr
    return "".join(parts)


def compare(records: list[Record], published: dict[str, tuple[str, hyperkernel.Classification]]) -> list[dict]:
    """Per record whose candidate is the very spec the published run checked for its task
    (same sha256: e.g. predictions converted from the pinned results JSON), the published
    log entry vs this run: ``{"task_id", "mode", "model", "published": {"verdict",
    "upstream_class", "cause", "source"}, "reproduced": {...}, "agree", "differences"}``
    (``agree``: same verdict). ``published``: :func:`harness.benchmarks.osvbench.rescore.published_log`."""
    rows = []
    for r in records:
        pub = published.get(r["task_id"])
        if pub is None or is_canary(r["candidate"]["model"]) or r["candidate"]["sha256"] != pub[0]:
            continue
        c = pub[1]
        p = {"verdict": _VERDICT_OF_KIND.get(c.kind, "infra_error"), "upstream_class": c.upstream, "cause": c.cause,
             "source": "outputs/output_claude3sonnet_Spec (OSVBench's image: Python 2.7, Z3 "
                       f"{c.z3_version or '4.5.0'})"}
        extra = r["verifier"].get("extra") or {}
        q = {"verdict": r["verdict"], "upstream_class": record_class(r), "cause": extra.get("cause") or r["verdict"]}
        diffs = [{"field": k, "published": p[k], "reproduced": q[k],
                  "explanation": f"this run: {r.get('reason', '')}"[:300]}
                 for k in ("verdict", "cause") if p[k] != q[k]]
        rows.append({"task_id": r["task_id"], "mode": r["mode"], "model": r["candidate"]["model"], "published": p,
                     "reproduced": q, "agree": p["verdict"] == q["verdict"], "differences": diffs})
    return rows
