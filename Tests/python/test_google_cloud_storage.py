"""google-cloud-storage, through its own API, against the emulator."""
import gzip
import os

import pytest
import requests
from google.api_core import exceptions
from google.cloud import storage


@pytest.fixture(scope="module")
def bucket(emulator):
    client = storage.Client(project="test-project")
    return client.create_bucket("py-bucket")


def test_upload_reload_patch_with_null_deletes(bucket):
    blob = bucket.blob("dir/my file+x&y;z~.txt")
    blob.upload_from_string(b"hello world", content_type="text/plain")
    assert blob.md5_hash == "XrY7u+Ae7tCTyyK7j1rNww=="
    assert blob.crc32c == "yZRlqg=="
    generation = blob.generation
    blob.reload()
    assert blob.size == 11 and blob.metageneration == 1

    blob.metadata = {"a": "1", "b": "2"}
    blob.cache_control = "public,max-age=300"
    blob.patch()
    blob.metadata = {"b": None, "c": "3"}
    blob.patch()
    blob.reload()
    assert blob.metadata == {"a": "1", "c": "3"}
    assert blob.cache_control == "public,max-age=300"
    assert blob.metageneration == 3
    assert blob.generation == generation

    blob.cache_control = None
    blob.patch()
    assert blob.cache_control is None
    assert bucket.get_blob("dir/my file+x&y;z~.txt").metageneration == 4


def test_download_whole_range_and_headers(bucket):
    blob = bucket.blob("range.txt")
    blob.upload_from_string(b"hello world", content_type="text/plain")
    fresh = bucket.blob("range.txt")
    assert fresh.download_as_bytes() == b"hello world"
    loaded = bucket.get_blob("range.txt")
    assert loaded.download_as_bytes(start=2, end=4) == b"llo"
    assert loaded.download_as_bytes(start=6) == b"world"


def test_ten_mib_resumable_upload_in_chunks(bucket):
    data = os.urandom(10 * 1024 * 1024 + 17)
    blob = bucket.blob("big.bin", chunk_size=4 * 1024 * 1024)
    blob.upload_from_string(data, content_type="application/octet-stream")
    assert blob.size == len(data)
    assert bucket.blob("big.bin").download_as_bytes() == data
    assert bucket.get_blob("big.bin").download_as_bytes(start=5_000_000, end=5_000_009) == data[5_000_000:5_000_010]


def test_gzip_object_served_as_stored_and_checked(bucket):
    text = b"compress me " * 200
    blob = bucket.blob("z.txt")
    blob.content_encoding = "gzip"
    blob.upload_from_string(gzip.compress(text), content_type="text/plain")
    assert bucket.blob("z.txt").download_as_bytes() == text
    assert bucket.blob("z.txt").download_as_bytes(raw_download=True) == gzip.compress(text) or gzip.decompress(
        bucket.blob("z.txt").download_as_bytes(raw_download=True)
    ) == text
    # A client that does not accept gzip gets the bytes decompressed.
    plain = requests.get(
        f"{os.environ['STORAGE_EMULATOR_HOST']}/download/storage/v1/b/py-bucket/o/z.txt?alt=media",
        headers={"Accept-Encoding": "identity"},
    )
    assert plain.content == text
    assert plain.headers["X-Goog-Stored-Content-Encoding"] == "gzip"


def test_list_with_prefix_delimiter_and_pages(emulator):
    client = storage.Client(project="test-project")
    bucket = client.create_bucket("py-list")
    for name in ["a/1", "a/2", "a/b/3", "a/b/4", "top"]:
        bucket.blob(name).upload_from_string(b"x")
    iterator = client.list_blobs("py-list", prefix="a/", delimiter="/")
    assert [blob.name for blob in iterator] == ["a/1", "a/2"]
    assert iterator.prefixes == {"a/b/"}
    paged = client.list_blobs("py-list", page_size=2)
    assert [blob.name for blob in paged] == ["a/1", "a/2", "a/b/3", "a/b/4", "top"]
    assert paged.page_number == 3


def test_copy_rewrite_compose(bucket):
    first = bucket.blob("part1")
    first.upload_from_string(b"AAA", content_type="text/plain")
    second = bucket.blob("part2")
    second.upload_from_string(b"BB")
    copied = bucket.copy_blob(first, bucket, "copied")
    assert copied.download_as_bytes() == b"AAA"
    rewritten = bucket.blob("rewritten")
    token, done, total = rewritten.rewrite(first)
    assert token is None and done == total == 3
    composed = bucket.blob("composed")
    composed.content_type = "text/plain"
    composed.compose([first, second, copied])
    assert composed.download_as_bytes() == b"AAABBAAA"
    composed.reload()
    assert composed.component_count == 3
    assert composed.md5_hash is None


def test_preconditions_and_not_found(bucket):
    blob = bucket.blob("guarded")
    blob.upload_from_string(b"v1", if_generation_match=0)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("guarded").upload_from_string(b"v2", if_generation_match=0)
    with pytest.raises(exceptions.PreconditionFailed):
        blob.reload(if_metageneration_match=7)
    blob.metadata = {"k": "v"}
    with pytest.raises(exceptions.PreconditionFailed):
        blob.patch(if_metageneration_match=5)
    blob.patch(if_metageneration_match=1)
    with pytest.raises(exceptions.NotFound):
        bucket.blob("missing").download_as_bytes()
    with pytest.raises(exceptions.NotFound):
        bucket.blob("missing").reload()
    assert bucket.get_blob("missing") is None
    blob.delete()
    assert bucket.get_blob("guarded") is None
    assert not bucket.blob("guarded").exists()
