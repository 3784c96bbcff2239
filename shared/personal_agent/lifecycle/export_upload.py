"""A write-only stream into one S3 object, in parts: at most `part_size` bytes are held at a time, so an export of
any size is built in bounded memory. Small objects go up in one PUT; larger ones as a multipart upload (parts of
`part_size`, at least S3's 5 MiB; the last may be smaller), aborted if the writer fails."""

from __future__ import annotations

from typing import Any

PART_SIZE = 8 * 1024 * 1024


class S3ObjectWriter:
    def __init__(self, client: Any, bucket: str, key: str, content_type: str, part_size: int = PART_SIZE) -> None:
        self._s3, self._bucket, self._key, self._type = client, bucket, key, content_type
        self._part_size = part_size
        self._buffer = bytearray()
        self._upload_id: str | None = None
        self._parts: list[dict[str, Any]] = []
        self.size = 0
        self.peak_buffer = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self._buffer += data
        self.size += len(data)
        self.peak_buffer = max(self.peak_buffer, len(self._buffer))
        while len(self._buffer) >= self._part_size:
            with memoryview(self._buffer) as view:
                part = bytes(view[: self._part_size])  # one copy, not a slice and then a copy of it
            self._upload_part(part)
            del part
            del self._buffer[: self._part_size]
        return len(data)

    def flush(self) -> None:
        """Parts go up when full, not on flush (zipfile flushes after every entry)."""

    def _upload_part(self, body: bytes) -> None:
        if self._upload_id is None:
            started = self._s3.create_multipart_upload(Bucket=self._bucket, Key=self._key, ContentType=self._type)
            self._upload_id = started["UploadId"]
        number = len(self._parts) + 1
        sent = self._s3.upload_part(
            Bucket=self._bucket, Key=self._key, UploadId=self._upload_id, PartNumber=number, Body=body
        )
        self._parts.append({"PartNumber": number, "ETag": sent["ETag"]})

    def finish(self) -> None:
        """Send what is left and make the object."""
        if self._upload_id is None:
            self._s3.put_object(Bucket=self._bucket, Key=self._key, Body=bytes(self._buffer), ContentType=self._type)
        else:
            if self._buffer:
                self._upload_part(bytes(self._buffer))
            self._s3.complete_multipart_upload(
                Bucket=self._bucket, Key=self._key, UploadId=self._upload_id, MultipartUpload={"Parts": self._parts}
            )
        self._buffer.clear()

    def abort(self) -> None:
        """Drop the parts sent so far (nothing is left behind in the bucket)."""
        if self._upload_id is not None:
            self._s3.abort_multipart_upload(Bucket=self._bucket, Key=self._key, UploadId=self._upload_id)
            self._upload_id = None
        self._buffer.clear()

    def __enter__(self) -> S3ObjectWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if exc_info[1] is None:
            self.finish()
        else:
            self.abort()
