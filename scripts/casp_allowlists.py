"""Re-derive the CASP allow-lists from honest candidates (harness/benchmarks/casp/docs.md "Allow-lists").

Runs Frama-C's view script (``harness/verifiers/drivers/framac_view.ml``, parse only, no
WP) on the verified file and on the task's fixed part of every honest candidate the
data offers, exactly as a job builds them (:func:`harness.benchmarks.casp.build_job`):

- the gold code of every task as a code-from-spec candidate,
- the gold contract of every task as a spec-from-code candidate,
- the LLM-written specifications bundled with casp-sample10 (spec-from-code).

For what the candidate wrote (:func:`harness.benchmarks.casp.allowlists.written`) it
collects every statement kind, type construct, attribute, callee (defined in the file,
the task's, libc, builtin), contract clause, code annotation, global annotation kind and
top-level declaration kind, and the largest storage of a function's locals; then prints
how often each occurs, marks those the allow-lists of ``integrity.py`` do not list, and
lists every candidate the new rules (``integrity.allowlist_checks``, and the fragment rules
``typed-memory`` and ``no-from`` of ``fragment.py``; ``compiler-agrees`` reads gcc's
diagnostics and is judged end to end) would reject.

Usage (the data come from the mirror, as in the tests)::

    VERIKIT_DATA_MIRRORS=../shared/data python scripts/casp_allowlists.py [--json FILE]
        [--dataset casp-sample10] [--frama-c "podman run --rm --network=none -v {dir}:/w -w /w IMAGE frama-c"]

Exit status 1 when an honest candidate's construct is not allowed (the lists are too
narrow for the data).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness import datasets
from harness.benchmarks import casp
from harness.benchmarks.casp import allowlists, integrity
from harness.benchmarks.casp.fragment import fragment_checks
from harness.verifiers.framac import _SHIPPED, VIEW_SCRIPT

CATEGORIES = ("statement", "type", "attribute", "callee", "clause", "code annotation", "global annotation",
              "declaration")


def view_of(frama_c: str, directory: Path, name: str) -> dict | None:
    """Frama-C's view of ``directory/name`` (None when Frama-C cannot parse it)."""
    out = f"{name}.view.json"
    argv = [a.replace("{dir}", str(directory)) for a in shlex.split(frama_c)]
    argv += ["-load-script", VIEW_SCRIPT, name]
    env = dict(os.environ, VERIKIT_VIEW=out, PWD=str(directory))
    if argv[0] in ("podman", "docker"):  # the variable must reach the container
        argv[argv.index("run") + 1: argv.index("run") + 1] = ["-e", f"VERIKIT_VIEW={out}"]
    subprocess.run(argv, cwd=directory, env=env, capture_output=True, timeout=600)
    path = directory / out
    return json.loads(path.read_text()) if path.exists() else None


def inventory(view: dict, task_view: dict, target: str, mode: str) -> list[tuple[str, str]]:
    """``[(category, construct)]`` of what the candidate wrote."""
    w = allowlists.written(view, task_view, target, mode)
    mine, task = integrity.functions_by_name(view), integrity.functions_by_name(task_view)
    out = []
    for f in w["code"]:
        out += [(c["kind"], c["name"]) for c in f["constructs"]]
        out += [("code annotation", a["kind"]) for a in f["annotations"]]
        for c in f["calls"]:
            callee = c["callee"]
            g = mine.get(callee or "", {})
            where = ("indirect" if callee is None else "builtin " + callee if g.get("builtin")
                     else "libc " + callee if g.get("libc") else "defined in the file" if g.get("defined")
                     else "the task's" if callee in task else "undeclared " + callee)
            out.append(("callee", where))
    for f in w["contracts"]:
        out += [("clause", k["kind"] + (" " + k["text"] if k["kind"] == "terminates" else "")) for k in f["clauses"]]
    for f in w["functions"]:
        out += [("attribute", a) for a in f["attribute_names"]]
    for v in w["variables"]:
        out += [(c["kind"], c["name"]) for c in v["constructs"]]
    for t in w["types"]:
        out += [(c["kind"], c["name"]) for c in t["constructs"]]
    for g in w["globals"]:
        out += [("global annotation", g["kind"])] + [("global annotation", m["kind"]) for m in g.get("members", [])]
    out += [("declaration", d["kind"]) for d in w["declarations"]]
    return out


def allowed(category: str, construct: str) -> bool:
    lists = {"statement": allowlists.ALLOWED_STATEMENTS, "type": allowlists.ALLOWED_TYPES,
             "attribute": allowlists.ALLOWED_ATTRIBUTES, "code annotation": allowlists.ALLOWED_CODE_ANNOTATIONS,
             "global annotation": integrity.ALLOWED_GLOBALS, "declaration": allowlists.ALLOWED_DECLARATIONS}
    if category == "callee":
        kind, _, name = construct.partition(" ")
        return construct in ("defined in the file", "the task's") or (kind == "libc"
                                                                      and name in allowlists.ALLOWED_LIBC_CALLEES)
    if category == "clause":
        kind = construct.split(" \\")[0]
        return kind in allowlists.ALLOWED_CLAUSES and (kind != "terminates" or construct == "terminates \\true")
    return construct in lists[category]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="casp-sample10")
    ap.add_argument("--frama-c", default="frama-c", help="command that runs Frama-C in a directory "
                    "({dir} is replaced by it), e.g. a podman run of the framac image")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, help="write the inventory and the findings here")
    args = ap.parse_args()

    fetched = datasets.fetch(args.dataset, offline=True)
    tasks = casp.load_tasks(fetched)
    by_id = {t.task_id: t for t in tasks}
    cands = ([(c, "code-from-spec") for c in casp.gold_candidates(tasks, "code-from-spec")]
             + [(c, "spec-from-code") for c in casp.gold_candidates(tasks, "spec-from-code")]
             + [(c, "spec-from-code") for c in casp.bundled_candidates(fetched, "spec-from-code")])

    task_views: dict[str, dict | None] = {}  # the task's fixed part (task.c) is the same for its candidates
    lock = threading.Lock()

    def one(item):
        cand, mode = item
        task = by_id[cand.task_id]
        job = casp.build_job(task, cand, mode, {}, {"name": args.dataset})
        if job.precheck:
            return cand, mode, None, f"decided before Frama-C: {job.precheck[0]}"
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            for name, text in {**job.files, **(job.task_run or {})}.items():
                (d / name).write_text(text)
            (d / VIEW_SCRIPT).write_bytes(_SHIPPED[VIEW_SCRIPT].read_bytes())
            view = view_of(args.frama_c, d, "candidate.c")
            ref = job.task_run[integrity.REFERENCE]
            with lock:
                known = ref in task_views
            if not known:
                made = view_of(args.frama_c, d, integrity.REFERENCE)
                with lock:
                    task_views.setdefault(ref, made)
            task_view = task_views[ref]
        if view is None or task_view is None:
            return cand, mode, None, "Frama-C did not parse " + ("the candidate's file" if view is None else "task.c")
        return cand, mode, (view, task_view, task.function), ""

    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(one, cands))

    counts: dict[str, Counter] = defaultdict(Counter)
    users: dict[tuple[str, str], set] = defaultdict(set)
    rejected, skipped, max_locals = [], [], (0, "")
    for cand, mode, views, why in results:
        label = f"{mode} {cand.task_id} {cand.model}"
        if views is None:
            skipped.append(f"{label}: {why}")
            continue
        view, task_view, target = views
        for cat, construct in inventory(view, task_view, target, mode):
            counts[cat][construct] += 1
            users[(cat, construct)].add(label)
        for f in allowlists.written(view, task_view, target, mode)["code"]:
            total = sum(v["bytes"] or 0 for v in f["locals"])
            max_locals = max(max_locals, (total, f"{label} {f['name']}()"))
        checks = integrity.allowlist_checks(view, task_view, target, mode)
        checks += [c for c in fragment_checks(view, task_view, target, mode, "") if c["name"] != "compiler-agrees"]
        broken = [c for c in checks if not c["ok"]]
        if broken:
            rejected.append(f"{label}: " + "; ".join(f"{c['name']}: {c['detail']}" for c in broken))

    judged = len(results) - len(skipped)
    print(f"{len(results)} honest candidates ({len(tasks)} tasks: gold code, gold contract; "
          f"{len(results) - 2 * len(tasks)} bundled specifications); {judged} parsed by Frama-C, {len(skipped)} not:")
    for s in skipped:
        print(f"  - {s}")
    narrow = []
    for cat in CATEGORIES:
        print(f"\n{cat}:")
        for construct, n in sorted(counts[cat].items(), key=lambda kv: (-kv[1], kv[0])):
            ok = allowed(cat, construct)
            if not ok:
                narrow.append((cat, construct))
            print(f"  {n:4d}  {construct}{'' if ok else '   <-- NOT ALLOWED: ' + ', '.join(sorted(users[(cat, construct)]))}")
    print(f"\nlargest storage of a function's locals: {max_locals[0]} bytes ({max_locals[1]}); "
          f"bound {allowlists.MAX_LOCAL_BYTES}")
    print(f"\nrejected by the new rules: {len(rejected)}")
    for r in rejected:
        print(f"  - {r}")
    if args.json:
        args.json.write_text(json.dumps({"candidates": len(results), "parsed": judged, "skipped": skipped,
                                         "counts": {k: dict(v) for k, v in counts.items()},
                                         "not_allowed": narrow, "rejected": rejected,
                                         "max_local_bytes": max_locals[0]}, indent=1, sort_keys=True))
    return 1 if narrow or rejected else 0


if __name__ == "__main__":
    sys.exit(main())
