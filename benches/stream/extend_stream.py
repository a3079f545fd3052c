#!/usr/bin/env python3
"""Streaming through `oose extend` (issue: streams answer promptly).

Latency: one CSV row written to `oose extend MODEL` on a pipe that stays open; the time
until its output row appears (the producer then pauses, as a live stream does).
Throughput: 10^6 rows through the same command from a file and from a pipe (`cat`).
Usage: extend_stream.py OOSE_BINARY [OOSE_BINARY ...] (e.g. a build before and after).
Standard library only.
"""
import os
import select
import subprocess
import sys
import tempfile
import time


def latency(oose, model, wait=5.0, trials=5):
    out = []
    for t in range(trials):
        p = subprocess.Popen([oose, "extend", model], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        time.sleep(0.3)  # the model is loaded; what is timed is the row's way through
        t0 = time.perf_counter()
        p.stdin.write(b"%f,%f,%f\n" % (1.0 + t, 2.0, 3.0))
        p.stdin.flush()
        buf = b""
        got = None
        while time.perf_counter() - t0 < wait:
            r, _, _ = select.select([p.stdout], [], [], 0.01)
            if r:
                buf += os.read(p.stdout.fileno(), 1 << 16)
                if buf.count(b"\n") >= 2:  # header and the row
                    got = time.perf_counter() - t0
                    break
        p.stdin.close()
        p.wait()
        out.append(got)
    return out


def throughput(oose, model, data, pipe):
    t0 = time.perf_counter()
    if pipe:
        cat = subprocess.Popen(["cat", data], stdout=subprocess.PIPE)
        subprocess.run([oose, "extend", model], stdin=cat.stdout,
                       stdout=subprocess.DEVNULL, check=True)
        cat.wait()
    else:
        subprocess.run([oose, "extend", model, "--input", data],
                       stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main():
    bins = sys.argv[1:]
    if not bins:
        sys.exit(__doc__)
    d = tempfile.mkdtemp(prefix="oose-stream-")
    train, model, data = (os.path.join(d, f) for f in ("train.csv", "k.oose", "new.csv"))
    subprocess.run([bins[-1], "dataset", "swiss-roll", "--n", "300", "--output", train], check=True)
    subprocess.run([bins[-1], "fit", "kpca", "--input", train, "--output", model], check=True)
    subprocess.run([bins[-1], "dataset", "swiss-roll", "--n", "1000000", "--seed", "1",
                    "--output", data], check=True)
    n = 1_000_000
    for b in bins:
        lat = latency(b, model)
        shown = ["> 5 s (none before EOF)" if v is None else f"{v * 1e3:.1f} ms" for v in lat]
        print(f"{b}: latency of one row: {', '.join(shown)}")
        for pipe in (False, True):
            ts = sorted(throughput(b, model, data, pipe) for _ in range(3))
            med = ts[1]
            print(f"{b}: 10^6 rows from {'a pipe' if pipe else 'a file'}: median {med:.2f} s "
                  f"= {n / med / 1e6:.2f} M rows/s (runs {', '.join(f'{t:.2f}' for t in ts)})")


if __name__ == "__main__":
    main()
