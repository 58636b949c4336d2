"""Batch runs on AWS Batch and SLURM: the kit plans, packs, submits, resumes and collects;
the engine schedules (the kit never grows a scheduler of its own).

- :mod:`harness.batch.shards` -- pure: shards balanced by expected cost, CPU-hour
  estimates.
- :mod:`harness.batch.control` -- a batch run from the user's side: plan and submit,
  status, resubmit, cancel, over an :class:`~harness.batch.control.Engine`.
- :mod:`harness.batch.aws` -- the AWS control plane over boto3: the spot compute
  environment, queue and job definitions (``batch setup``), submitting the array job and
  its reducer, status, and the retry decision as a pure function.
- :mod:`harness.batch.slurm` -- SLURM: checks, one ``sbatch --array`` job per submission,
  its batch script (stop and requeue before the time limit), status, cancel.
- :mod:`harness.batch.worker` -- what runs on the batch side (the runner image's command,
  an array task's): one shard's jobs, one store file per record, resumable and
  stoppable; the reducer; collect.

Records live in the run's store (:class:`harness.results.Store`: S3, or a directory on a
shared filesystem) as ``<run>/records/<job key>.json``, in exactly the record format and
schema of a local run, so a collected run is an ordinary run directory that ``verikit
validate`` checks like any other.
"""
