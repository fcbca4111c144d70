"""Starts one storage-emulator (the debug build by default) for the client tests."""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import pytest

# gcsfs's default mode probes a gRPC service first (60 s timeouts against an HTTP emulator);
# it reads this at import time.
os.environ["GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT"] = "false"

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("STORAGE_EMULATOR_BINARY", str(ROOT / ".build" / "debug" / "storage-emulator"))


@pytest.fixture(scope="session")
def emulator():
    data = tempfile.mkdtemp(prefix="se-python-")
    process = subprocess.Popen(
        [BINARY, "--port", "0", "--data-dir", data, "--bucket", "aio-bucket", "--bucket", "demo-project.appspot.com"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
    assert match, f"no ready line from the emulator: {line!r}"
    base = f"http://127.0.0.1:{match.group(1)}"
    os.environ["STORAGE_EMULATOR_HOST"] = base
    yield base
    process.terminate()
    assert process.wait(10) == 0
    shutil.rmtree(data, ignore_errors=True)
