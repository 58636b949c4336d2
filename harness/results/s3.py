"""The S3 store of a batch run (:class:`S3Store`): the store primitives over S3 objects; the
record format and checks are the shared ones of :class:`~.store.Store`."""

from __future__ import annotations

from .batchstore import Store


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` -> ``("bucket", "some/prefix")`` (no trailing slash).

    Raises:
        ValueError: not an ``s3://`` URI with a bucket.
    """
    if not uri.startswith("s3://") or not uri[5:].split("/", 1)[0]:
        raise ValueError(f"{uri!r} is not an S3 URI (s3://bucket/prefix)")
    bucket, _, prefix = uri[5:].partition("/")
    return bucket, prefix.strip("/")


class S3Store(Store):
    """A batch run's objects under ``s3://bucket/prefix`` (a :class:`~.store.Store`): one
    object per file, so one per record (``records/<job key>.json``).

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

    def get_bytes(self, name: str) -> bytes | None:
        self.requests += 1
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self.key(name))["Body"].read()
        except self.client.exceptions.NoSuchKey:
            return None

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

    def delete(self, name: str) -> None:
        self.requests += 1
        self.client.delete_object(Bucket=self.bucket, Key=self.key(name))
