#!/usr/bin/env python3
"""Record real coqc outputs for tests/test_rocq.py (tests/recorded/rocq/).

Runs the Rocq canaries of NTP4VC (harness/benchmarks/ntp4vc/proofs.py ROCQ_CANARIES) on the
``power'vc`` task with the real Coq of the ``ntp4vc-rocq`` image, and writes for each
``<name>.json`` (argv, exit code, stdout, stderr, image, Coq version, date) and, when coqc
wrote one, ``<name>.report.out`` (the Print Assumptions report). Needs an engine
(DOCKER_HOST) and VERIKIT_DATA_MIRRORS (or the data cache) for the pinned files.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.runner import job_image  # noqa: E402
from harness import datasets, toolchains  # noqa: E402
from harness.benchmarks import ntp4vc  # noqa: E402
from harness.model import Candidate, Limits  # noqa: E402
from harness.registry import sandbox as get_sandbox  # noqa: E402
from harness.verifiers.rocq import Rocq  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests" / "recorded" / "rocq"
NAMES = ("ill-typed", "admit")  # the outputs tests/test_rocq.py reads (the others are run live)


def main() -> int:
    fetched = datasets.fetch("ntp4vc")
    tasks = {t.task_id: t for t in ntp4vc.load_tasks(fetched)}
    bench = ntp4vc.BENCHMARK
    image = job_image(bench, "rocq", fetched, print)
    sb = get_sandbox("container", image=image)
    try:
        v = Rocq()
        probed = toolchains.probe("rocq", sb)
        v.prepare(sb, probed)
        ctx = bench.context(fetched, list(tasks.values()), "rocq", v, 0)
        opts = v.options(probed)
        OUT.mkdir(parents=True, exist_ok=True)
        for name in NAMES:
            proof = ntp4vc.ROCQ_CANARIES[name][0]
            job = bench.build_job(tasks[ntp4vc.CANARY_TASK], Candidate(ntp4vc.CANARY_TASK, "rec", 0, proof, "x"),
                                  "rocq", opts, {}, ctx)
            argv, env, collect = v.command(job.options)
            proc = sb.run(argv, files=job.files, env=env, collect=collect, limits=Limits(wall_s=60))
            meta = {"argv": argv, "returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                    "candidate_proof": proof, "task": ntp4vc.CANARY_TASK, "image": image, "image_id": sb.image_digest,
                    "coq": probed.versions.get("coq"), "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    "recorded_by": "scripts/record_rocq_outputs.py"}
            (OUT / f"{name}.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n")
            for rel, data in proc.files.items():
                (OUT / f"{name}.report.out").write_bytes(data)
            print(name, proc.returncode, sorted(proc.files))
    finally:
        sb.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
