"""Where sealed segments and checkpoints go (stores, for the writer) and where a verifier reads them (sources).

Names are POSIX relative paths ("segments/...jsonl", "checkpoints/...json"), identical in every store.
The directory store writes atomically (temporary file, fsync, rename, fsync of the directory). The S3 store
writes every object under Object Lock in COMPLIANCE mode; its source lists all versions and reads the
original (oldest) version of each key by version id, reporting any later version or delete marker, which
under COMPLIANCE can only be an attempt to overwrite or hide the original.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from audit.errors import ConfigError, StoreError

TMP_PREFIX = ".tmp-"


class Store(Protocol):
    """Plug-in point for the writer: durable, write-once storage of named objects."""

    def put(self, name: str, data: bytes) -> None: ...

    def exists(self, name: str) -> bool: ...

    def describe(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SourceNote:
    """Something a source noticed while listing (an overwritten or delete-marked object)."""

    code: str
    name: str
    message: str


class Source(Protocol):
    """Plug-in point for the verifier: list and read what a store holds."""

    def names(self) -> list[str]: ...

    def read(self, name: str) -> bytes: ...

    def notes(self) -> list[SourceNote]: ...

    def describe(self) -> str: ...


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class DirectoryStore:
    """A local directory: atomic, fsynced writes; an existing object with other bytes is never replaced."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def describe(self) -> str:
        return str(self.root)

    def exists(self, name: str) -> bool:
        return (self.root / name).is_file()

    def put(self, name: str, data: bytes) -> None:
        path = self.root / name
        if path.exists():
            if path.read_bytes() == data:
                return
            raise StoreError("refusing to replace an existing object with other bytes", where=str(path))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{TMP_PREFIX}{path.name}")
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
            fsync_dir(path.parent)
        except OSError as exc:
            raise StoreError("cannot write object", where=str(path), found=str(exc)) from exc


class DirectorySource:
    def __init__(self, root: Path) -> None:
        self.root = root

    def describe(self) -> str:
        return str(self.root)

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        out = []
        for dirpath, _dirs, files in os.walk(self.root):
            for file in files:
                out.append(Path(dirpath, file).relative_to(self.root).as_posix())
        return sorted(out)

    def read(self, name: str) -> bytes:
        try:
            return (self.root / name).read_bytes()
        except OSError as exc:
            raise StoreError("cannot read", where=str(self.root / name), found=str(exc)) from exc

    def notes(self) -> list[SourceNote]:
        return []


def s3_client(endpoint_url: str | None = None, region: str | None = None) -> Any:
    import boto3

    return boto3.client("s3", endpoint_url=endpoint_url, region_name=region or os.environ.get(
        "AWS_REGION", os.environ.get("AWS_DEFAULT_REGION", "us-east-1")))


def parse_s3_url(url: str) -> tuple[str, str]:
    """s3://bucket/prefix -> (bucket, "prefix/") with the prefix normalized to end in "/" (or be empty)."""
    if not url.startswith("s3://"):
        raise ConfigError("not an s3:// URL", found=url)
    bucket, _, prefix = url[5:].partition("/")
    if not bucket:
        raise ConfigError("s3 URL has no bucket", found=url)
    prefix = prefix.strip("/")
    return bucket, f"{prefix}/" if prefix else ""


class S3Store:
    """S3 with Object Lock: every put carries COMPLIANCE retention until now + `retention_days`."""

    def __init__(self, bucket: str, prefix: str = "", *, retention_days: int = 365,
                 endpoint_url: str | None = None, region: str | None = None, client: Any = None,
                 check_lock: bool = True) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.retention_days = retention_days
        self._client: Any = client if client is not None else s3_client(endpoint_url, region)
        if check_lock:
            try:
                conf = self._client.get_object_lock_configuration(Bucket=bucket)
                enabled = conf.get("ObjectLockConfiguration", {}).get("ObjectLockEnabled")
            except Exception as exc:  # botocore: missing bucket, no lock configuration, no permission
                raise ConfigError("bucket has no usable Object Lock configuration", where=bucket,
                                  found=f"{type(exc).__name__}: {exc}") from exc
            if enabled != "Enabled":
                raise ConfigError("bucket does not have Object Lock enabled", where=bucket, found=enabled)

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> S3Store:
        bucket, prefix = parse_s3_url(url)
        return cls(bucket, prefix, **kwargs)

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def exists(self, name: str) -> bool:
        try:
            self._client.head_object(Bucket=self.bucket, Key=self.prefix + name)
        except Exception as exc:
            code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
            if code in {"404", "NoSuchKey", "NotFound"}:
                return False
            raise StoreError("S3 HeadObject failed", where=self.describe() + name,
                             found=f"{type(exc).__name__}: {exc}") from exc
        return True

    def put(self, name: str, data: bytes) -> None:
        until = dt.datetime.now(dt.UTC) + dt.timedelta(days=self.retention_days)
        try:
            self._client.put_object(
                Bucket=self.bucket, Key=self.prefix + name, Body=data,
                ContentMD5=base64.b64encode(hashlib.md5(data).digest()).decode("ascii"),  # noqa: S324 - S3 API
                ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until)
        except Exception as exc:
            raise StoreError("S3 PutObject failed", where=self.describe() + name,
                             found=f"{type(exc).__name__}: {exc}") from exc


class S3Source:
    """Reads the original version of every key under a prefix, noting later versions and delete markers."""

    def __init__(self, bucket: str, prefix: str = "", *, endpoint_url: str | None = None,
                 region: str | None = None, client: Any = None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self._client: Any = client if client is not None else s3_client(endpoint_url, region)
        self._versions: dict[str, str] | None = None
        self._notes: list[SourceNote] = []

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def _list(self) -> dict[str, str]:
        if self._versions is not None:
            return self._versions
        versions: dict[str, list[tuple[dt.datetime, str]]] = {}
        markers: dict[str, int] = {}
        try:
            pages = self._client.get_paginator("list_object_versions").paginate(
                Bucket=self.bucket, Prefix=self.prefix)
            for page in pages:
                for v in page.get("Versions", []):
                    versions.setdefault(v["Key"], []).append((v["LastModified"], v["VersionId"]))
                for m in page.get("DeleteMarkers", []):
                    markers[m["Key"]] = markers.get(m["Key"], 0) + 1
        except Exception as exc:
            raise StoreError("S3 ListObjectVersions failed", where=self.describe(),
                             found=f"{type(exc).__name__}: {exc}") from exc
        chosen: dict[str, str] = {}
        for key, found in versions.items():
            name = key[len(self.prefix):]
            # S3 lists a key's versions newest first; the last one is the original write. Timestamps only
            # break the tie if a store lists them in another order.
            original = min(enumerate(found), key=lambda iv: (iv[1][0], -iv[0]))[1]
            chosen[name] = original[1]
            if len(found) > 1:
                self._notes.append(SourceNote("STORE_OVERWRITTEN", name,
                                              f"{len(found) - 1} later version(s) exist; verified the "
                                              f"original version {original[1]}"))
        for key, count in markers.items():
            self._notes.append(SourceNote("STORE_DELETE_MARKER", key[len(self.prefix):],
                                          f"{count} delete marker(s) hide this object"))
        self._versions = chosen
        return chosen

    def names(self) -> list[str]:
        return sorted(self._list())

    def read(self, name: str) -> bytes:
        version = self._list().get(name)
        if version is None:
            raise StoreError("no such object", where=self.describe() + name)
        try:
            out = self._client.get_object(Bucket=self.bucket, Key=self.prefix + name, VersionId=version)
            return bytes(out["Body"].read())
        except Exception as exc:
            raise StoreError("S3 GetObject failed", where=self.describe() + name,
                             found=f"{type(exc).__name__}: {exc}") from exc

    def notes(self) -> list[SourceNote]:
        self._list()
        return list(self._notes)
