"""Cloud batch on AWS Batch: the kit plans, packs, submits, resumes and collects; AWS
Batch schedules (the kit never grows a scheduler of its own).

- :mod:`harness.batch.plan` -- pure: shards balanced by expected cost, the run manifest,
  CPU-hour estimates.
- :mod:`harness.batch.aws` -- the AWS control plane over boto3: the spot compute
  environment, queue and job definitions (``batch setup``), submitting the array job and
  its reducer, status, resubmission, and the retry decision as a pure function.
- :mod:`harness.batch.worker` -- what runs in the runner image: one shard's jobs, one S3
  object per record, resumable and stoppable; the reducer; collect.

Records live in S3 as ``<run>/records/<job key>.json`` (:class:`harness.results.S3Store`),
in exactly the record format and schema of a local run, so a collected run is an ordinary
run directory that ``verikit validate`` checks like any other.
"""
