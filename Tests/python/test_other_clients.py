"""gcsfs, gcloud-aio-storage and firebase-admin against the emulator."""
import asyncio
import os

import google.auth.credentials
import pytest
import requests


def test_gcsfs(emulator):
    import gcsfs

    fs = gcsfs.GCSFileSystem(token="anon", endpoint_url=emulator)
    fs.mkdir("fsb")
    fs.pipe("fsb/dir/a b.txt", b"data")
    assert fs.cat("fsb/dir/a b.txt") == b"data"
    assert fs.ls("fsb/dir", detail=False) == ["fsb/dir/a b.txt"]
    assert fs.info("fsb/dir/a b.txt")["size"] == 4
    fs.setxattrs("fsb/dir/a b.txt", k="v")
    fs.invalidate_cache()
    assert fs.getxattr("fsb/dir/a b.txt", "k") == "v"

    big = os.urandom(6 * 1024 * 1024 + 5)
    with fs.open("fsb/big.bin", "wb", block_size=5 * 1024 * 1024) as handle:
        handle.write(big)
    assert fs.cat("fsb/big.bin") == big
    assert fs.cat_file("fsb/big.bin", start=10, end=20) == big[10:20]
    fs.cp("fsb/big.bin", "fsb/big2.bin")
    assert fs.info("fsb/big2.bin")["size"] == len(big)
    assert sorted(fs.find("fsb")) == ["fsb/big.bin", "fsb/big2.bin", "fsb/dir/a b.txt"]
    with pytest.raises(FileExistsError):
        fs.pipe_file("fsb/big.bin", b"again", mode="create")
    fs.rm(["fsb/big.bin", "fsb/big2.bin"])
    with pytest.raises(FileNotFoundError):
        fs.cat("fsb/big.bin")


def test_gcloud_aio_storage(emulator):
    from gcloud.aio.storage import Storage

    async def scenario():
        async with Storage() as client:
            await client.upload("aio-bucket", "d/x y.txt", b"hello", metadata={"metadata": {"k": "v"}})
            assert await client.download("aio-bucket", "d/x y.txt") == b"hello"
            meta = await client.download_metadata("aio-bucket", "d/x y.txt")
            assert meta["metadata"] == {"k": "v"}
            patched = await client.patch_metadata("aio-bucket", "d/x y.txt", {"metadata": {"k": None, "j": "2"}})
            assert patched["metadata"] == {"j": "2"}
            big = os.urandom(6 * 1024 * 1024)
            await client.upload("aio-bucket", "big.bin", big, force_resumable_upload=True)
            assert await client.download("aio-bucket", "big.bin") == big
            listed = await client.list_objects("aio-bucket", params={"prefix": "d/"})
            assert [item["name"] for item in listed["items"]] == ["d/x y.txt"]
            await client.delete("aio-bucket", "d/x y.txt")
            listed = await client.list_objects("aio-bucket", params={"prefix": "d/"})
            assert listed.get("items", []) == []

    asyncio.run(scenario())


def test_firebase_admin_download_token_flow(emulator):
    import firebase_admin
    from firebase_admin import credentials, storage

    class Anonymous(credentials.Base):
        def get_credential(self):
            return google.auth.credentials.AnonymousCredentials()

    app = firebase_admin.initialize_app(
        Anonymous(), {"storageBucket": "demo-project.appspot.com", "projectId": "demo-project"}, name="se-test"
    )
    bucket = storage.bucket(app=app)
    blob = bucket.blob("images/forest.jpg")
    blob.metadata = {"firebaseStorageDownloadTokens": "tok-123", "location": "Yosemite"}
    blob.upload_from_string(b"jpeg bytes", content_type="image/jpeg")
    v0 = requests.get(f"{emulator}/v0/b/demo-project.appspot.com/o/images%2Fforest.jpg").json()
    assert v0["downloadTokens"] == "tok-123"
    assert v0["metadata"] == {"location": "Yosemite"}
    media = requests.get(f"{emulator}/v0/b/demo-project.appspot.com/o/images%2Fforest.jpg?alt=media&token=tok-123")
    assert media.content == b"jpeg bytes"
    firebase_admin.delete_app(app)
