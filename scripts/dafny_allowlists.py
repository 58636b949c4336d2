"""Derive the Dafny intent allow-lists (harness/benchmarks/dafny_intent/view.py) from data.

Builds the check files (``batch.dfy``) the kit verifies for every gold specification of
MBPP-DFY-153 and every bundled GPT-4 specification, has the ``dafny`` image's Dafny print
them as it parsed them (one ``dafny /noResolve /dprint`` process over all files), reads the
printout with :func:`harness.verifiers.dafny.program_view` and prints, per region, the
declaration kinds, attributes, keywords, operators and bitvector/array types that occur,
next to the allow-lists of view.py (what the data needs that the lists lack is marked).

    VERIKIT_DATA_MIRRORS=../shared/data python scripts/dafny_allowlists.py [--engine podman]
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import datasets  # noqa: E402
from harness.benchmarks import dafny_intent as di  # noqa: E402
from harness.benchmarks.dafny_intent import view as allow  # noqa: E402
from harness.sandbox.images import image_tag  # noqa: E402
from harness.verifiers.dafny import program_view  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="podman")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        fetched = datasets.fetch("dafny-intent", data_dir=out / "data", offline=True)
        tasks = {t.task_id: t for t in di.load_tasks(fetched)}
        cands = di.gold_candidates(list(tasks.values()), "spec") + di.bundled_candidates(fetched, "spec")
        (out / "w").mkdir()
        names = []
        for c in cands:
            job = di.build_job(tasks[c.task_id], c, "spec", {"dialect": "2"}, {"name": "dafny-intent"})
            if "batch.dfy" in job.files:
                name = f"{c.model}_{c.task_id}.dfy"
                (out / "w" / name).write_text(job.files["batch.dfy"])
                names.append(name)
        subprocess.run([args.engine, "run", "--rm", "-v", f"{out / 'w'}:/w:Z", "-w", "/w", image_tag("dafny"), "sh", "-c",
                        "dafny /nologo /noResolve /compile:0 /dprint:/w/all.dprint *.dfy > /w/all.out 2>&1"],
                       check=True)
        view = program_view((out / "w" / "all.dprint").read_text())
    print(f"{len(names)} check files of {len(cands)} candidates; printout error: {view['error']}; "
          f"unclassified: {view['unclassified'][:5]}")
    got: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for d in view["decls"]:
        region = "check" if d["name"].startswith("VkT") else "helper"
        got[f"{region} kinds"][d["kind"]] += 1
        got[f"{region} attributes"].update(d["attributes_all"])
        got[f"{region} keywords"].update(d["keywords"])
        got[f"{region} body keywords"].update(d["body_keywords"])
        got[f"{region} operators"].update(d["puncts"])
        got["types"].update(d["types"])
        if not d["body"]:
            got["body-less"][d["name"]] += 1
    lists = {"helper kinds": allow.HELPER_KINDS, "helper attributes": allow.ALLOWED_ATTRIBUTES,
             "check keywords": allow.SPEC_KEYWORDS, "helper keywords": allow.HELPER_KEYWORDS,
             "helper body keywords": allow.BODY_KEYWORDS, "check body keywords": allow.CHECK_BODY_KEYWORDS,
             "helper operators": allow.OPERATORS, "check operators": allow.OPERATORS}
    for k in sorted(got):
        have = lists.get(k)
        missing = sorted(set(got[k]) - set(have)) if have is not None else []
        print(f"{k}: {dict(sorted(got[k].items()))}" + (f"  NOT ON THE LIST: {missing}" if missing else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
