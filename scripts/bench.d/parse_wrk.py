"""Reads wrk --latency output on stdin; prints: req/s p50_ms p99_ms transfer_MB/s non2xx requests."""
import re
import sys

text = sys.stdin.read()


def ms(label):
    match = re.search(r"\s" + re.escape(label) + r"\s+([\d.]+)(us|ms|s)\b", text)
    if not match:
        return float("nan")
    return float(match.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[match.group(2)]


rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
transfer = re.search(r"Transfer/sec:\s+([\d.]+)(B|KB|MB|GB)", text)
mbps = float(transfer.group(1)) * {"B": 1e-6, "KB": 1e-3, "MB": 1, "GB": 1e3}[transfer.group(2)] if transfer else 0
errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
total = re.search(r"(\d+) requests in", text)
print(f"{rps:.0f} {ms('50%'):.2f} {ms('99%'):.2f} {mbps:.0f} {errors.group(1) if errors else 0} {total.group(1) if total else 0}")
