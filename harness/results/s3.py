"""The S3 store of a run (:class:`S3Store`): the same record format and schema checks as a
run directory, one object per record."""

from __future__ import annotations

import json
from pathlib import Path

from ..model import canonical_json
from .records import load_records, record_key
from .schema import ValidationError, validate
from .stores import OUTPUTS, OutputStore


RUN_FILES = ("run.json", "records.jsonl", "report.json", "SHA256SUMS")


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` -> ``("bucket", "some/prefix")`` (no trailing slash).

    Raises:
        ValueError: not an ``s3://`` URI with a bucket.
    """
    if not uri.startswith("s3://") or not uri[5:].split("/", 1)[0]:
        raise ValueError(f"{uri!r} is not an S3 URI (s3://bucket/prefix)")
    bucket, _, prefix = uri[5:].partition("/")
    return bucket, prefix.strip("/")


class S3Store:
    """A run's objects under ``s3://bucket/prefix``: the same record format and schema
    checks as a run directory, one object per record (``records/<job key>.json``).

    An S3 PUT is atomic: an object is there whole or not at all, so a worker killed while
    writing leaves no torn record. The client is ``boto3.client("s3")`` (credentials and
    region the usual way; ``AWS_ENDPOINT_URL`` points it at a stand-in such as moto).

    Attributes:
        uri: the run's S3 URI; requests: API calls made so far (the batch benchmark
            counts S3 round trips per job with it).
    """

    def __init__(self, uri: str, client=None):
        self.bucket, self.prefix = parse_s3_uri(uri)
        self.uri = f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"
        if client is None:
            import boto3

            client = boto3.client("s3")
        self.client = client
        self.requests = 0

    def key(self, name: str) -> str:
        """The object key of ``name`` (relative to the run)."""
        return f"{self.prefix}/{name}" if self.prefix else name

    def put_bytes(self, name: str, data: bytes) -> None:
        self.requests += 1
        self.client.put_object(Bucket=self.bucket, Key=self.key(name), Body=data)

    def put_json(self, name: str, obj, *, kind: str | None = None) -> None:
        """Validate (if ``kind``) and upload ``obj`` as JSON. Raises ValidationError."""
        if kind:
            validate(kind, obj, f"{self.uri}/{name}")
        self.put_bytes(name, (json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n").encode())

    def get_bytes(self, name: str) -> bytes | None:
        """The object's content, or None when it does not exist."""
        self.requests += 1
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self.key(name))["Body"].read()
        except self.client.exceptions.NoSuchKey:
            return None

    def get_json(self, name: str):
        """The object parsed as JSON, or None when it does not exist. Raises ValueError
        (naming the URI) when it is not JSON."""
        data = self.get_bytes(name)
        if data is None:
            return None
        try:
            return json.loads(data)
        except ValueError as exc:
            raise ValueError(f"{self.uri}/{name}: not JSON: {exc}") from None

    def exists(self, name: str) -> bool:
        from botocore.exceptions import ClientError

        self.requests += 1
        try:
            self.client.head_object(Bucket=self.bucket, Key=self.key(name))
            return True
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise

    def names(self, under: str = "") -> list[str]:
        """Names (relative to the run) of every object under ``under``."""
        out = []
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket,
                                                                          Prefix=self.key(under)):
            self.requests += 1
            out += [o["Key"][len(self.key("")):] for o in page.get("Contents", [])]
        return out

    def put_record(self, record: dict) -> str:
        """Validate ``record`` and put it as ``records/<key>.json``; returns the name.

        Raises:
            ValidationError: not a valid record, or its key is not the one its fields give.
        """
        validate("record", record, f"record {record.get('key')}")
        if record_key(record) != record["key"]:
            raise ValidationError(f"record {record['key']}: key is not the one its fields give ({record_key(record)})")
        name = f"records/{record['key']}.json"
        self.put_bytes(name, canonical_json(record).encode())
        return name

    def records(self) -> tuple[dict[str, dict], list[str]]:
        """Every record object, checked: ``({key: record}, problems)``. An object that is
        not JSON, not a valid record, whose key is not the one its fields give, or whose
        name is not its key is left out and named in ``problems``."""
        found, problems = {}, []
        for name in self.names("records/"):
            if not name.endswith(".json"):
                continue
            where = f"{self.uri}/{name}"
            try:
                rec = self.get_json(name)
                validate("record", rec, where)
            except (ValueError, ValidationError) as exc:
                problems.append(str(exc))
                continue
            key = name[len("records/"):-len(".json")]
            if rec["key"] != key or record_key(rec) != key:
                problems.append(f"{where}: the record's key {rec['key'][:12]} is not its name or not the one its "
                                f"fields give")
                continue
            found[key] = rec
        return found, problems

    def put_output(self, outputs: OutputStore, sha: str) -> None:
        """Put one tool output file of ``outputs`` as ``outputs/<sha[:2]>/<sha>.json.gz``."""
        self.put_bytes(OutputStore.name(sha), outputs.read_bytes(sha))

    def get_outputs(self, outputs: OutputStore, shas) -> list[str]:
        """Copy the tool outputs ``shas`` into ``outputs``; returns those not in the store."""
        missing = []
        for sha in sorted(set(shas)):
            data = self.get_bytes(OutputStore.name(sha))
            if data is None:
                missing.append(sha)
            else:
                outputs.write_bytes(sha, data)
        return missing

    def download_run(self, dest: Path) -> list[str]:
        """Copy the run files that exist (``RUN_FILES``) into ``dest``, and the tool outputs
        its records name; returns the run files' names."""
        dest.mkdir(parents=True, exist_ok=True)
        got = []
        for name in RUN_FILES:
            data = self.get_bytes(name)
            if data is not None:
                (dest / name).write_bytes(data)
                got.append(name)
        if (dest / "records.jsonl").exists():
            shas = [r["tool_output"]["sha256"] for r in load_records(dest / "records.jsonl") if r.get("tool_output")]
            self.get_outputs(OutputStore(dest / OUTPUTS), shas)
        return got

    def upload_run(self, src: Path) -> None:
        """Put the run files of directory ``src`` next to the records, and its report.html
        (a view, not checked by SHA256SUMS) when there is one; SHA256SUMS last."""
        outputs = OutputStore(src / OUTPUTS)
        if (src / "records.jsonl").exists():
            for r in load_records(src / "records.jsonl"):
                if r.get("tool_output") and outputs.has(r["tool_output"]["sha256"]):
                    self.put_output(outputs, r["tool_output"]["sha256"])
        for name in (*RUN_FILES[:-1], "report.html", RUN_FILES[-1]):
            if (src / name).exists():
                self.put_bytes(name, (src / name).read_bytes())
