"""One scripts/bench-instructions measurement: BINARY WORKLOAD REQUESTS OUTPUT_PREFIX.

Starts BINARY under callgrind, seeds it, sends 50 uncounted then REQUESTS counted requests of
WORKLOAD on one keep-alive connection, and prints the instructions per counted request.
"""
import glob
import http.client
import json
import os
import re
import signal
import subprocess
import sys

binary, workload, requests, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
WARMUP = 50
out = prefix + ".callgrind"
storage = ["--in-memory"] if os.environ.get("BENCH_IN_MEMORY") else ["--data-dir", prefix + ".data"]
server = subprocess.Popen(
    ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, binary, "--port", "0",
     *storage, "--lenient-buckets"],
    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
port = None
while port is None:
    line = server.stdout.readline()
    if not line:
        sys.exit(f"{binary} did not start under valgrind")
    match = re.search(r"ready on http://127\.0\.0\.1:(\d+)", line)
    if match:
        port = int(match.group(1))
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)


def send(method, path, body=None, headers=None):
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"{method} {path}: {response.status}")


send("POST", "/storage/v1/b", json.dumps({"name": "bench"}), {"Content-Type": "application/json"})
send("POST", "/upload/storage/v1/b/bench/o?uploadType=media&name=meta.json", b"{}" * 512,
     {"Content-Type": "application/json"})
send("POST", "/upload/storage/v1/b/bench/o?uploadType=media&name=1k.bin", bytes(range(256)) * 4)
if workload == "list":
    for i in range(1000):
        send("POST", f"/upload/storage/v1/b/bench/o?uploadType=media&name=p%2F{i:05d}", b"x")


def request(i):
    if workload == "get":
        send("GET", "/storage/v1/b/bench/o/meta.json")
    elif workload == "patch":
        send("PATCH", "/storage/v1/b/bench/o/meta.json", json.dumps({"metadata": {"bench": str(i)}}),
             {"Content-Type": "application/json"})
    elif workload == "media":
        send("GET", "/storage/v1/b/bench/o/1k.bin?alt=media")
    elif workload == "upload":
        send("POST", f"/upload/storage/v1/b/bench/o?uploadType=media&name=up%2F{i}", b"x" * 1024,
             {"Content-Type": "application/octet-stream"})
    elif workload == "multipart":
        body = (b'--b\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{"name":"mp/%d","metadata":{"k":"v"}}'
                b'\r\n--b\r\nContent-Type: application/octet-stream\r\n\r\n' % i) + b"x" * 1024 + b"\r\n--b--\r\n"
        send("POST", "/upload/storage/v1/b/bench/o?uploadType=multipart", body,
             {"Content-Type": "multipart/related; boundary=b"})
    elif workload == "firebase":
        send("POST", f"/v0/b/bench/o?name=fb%2F{i}", b"x" * 1024,
             {"Content-Type": "application/octet-stream", "X-Goog-Upload-Protocol": "raw"})
    elif workload == "list":
        send("GET", "/storage/v1/b/bench/o?prefix=p%2F001&maxResults=100")
    else:
        sys.exit(f"unknown workload {workload}")


for i in range(WARMUP):
    request(i)
subprocess.run(["callgrind_control", "-z", str(server.pid)], check=True, capture_output=True)
for i in range(WARMUP, WARMUP + requests):
    request(i)
subprocess.run(["callgrind_control", "-d", str(server.pid)], check=True, capture_output=True)
server.send_signal(signal.SIGTERM)
server.wait()
dumps = sorted(glob.glob(out + ".*"), key=lambda path: int(path.rsplit(".", 1)[1]))
if not dumps:
    sys.exit("callgrind wrote no dump")
total = None
with open(dumps[0]) as dump:
    for line in dump:
        if line.startswith(("summary:", "totals:")):
            total = int(line.split()[1])
if total is None:
    sys.exit("no total in the callgrind dump")
print(total // requests)
