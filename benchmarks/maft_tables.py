"""MAFT's row sets: a large slot table from ``np.zeros`` against a fresh huge-page mapping.

``fairlens.maft._utils.fresh_zeros`` gives a hash set's slot table (16 MiB for a share of census
1000 x 1000) as a private anonymous mapping advised for transparent huge pages, where NumPy advises
huge pages for its own arrays; ``np.zeros`` is the reference (heap pages that ``calloc`` clears,
copied on first write after a fork).  The job is what one share of the local phase does with its
two sets: 1,000 steps of 500 keys each into a found-row set (``index``) and an explored set
(``insert``), pre-sized as the search pre-sizes them, timed in this process and in a process forked
from it (the parent and the child at once, as ``run_chunks(fork_safe=True)`` runs a share).  Both
sets end with the same keys (checked).  Medians over ``--repeat`` runs per place, each table kind
in turn.

Run: ``PYTHONPATH=. python benchmarks/maft_tables.py [--repeat 5]``
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import fairlens.maft._utils as utils
from fairlens.maft._utils import KeySet

STEPS, WIDTH, CAPACITY = 1000, 500, 500_000
FRESH = utils.fresh_zeros


def reference(shape):
    return np.zeros(shape, dtype=np.int64)


def job(keys):
    """Seconds for the two sets of one share, and their keys' checksum."""
    t = time.perf_counter()
    found = KeySet(1, CAPACITY)
    explored = KeySet(1, CAPACITY, positions=False)
    for step in keys:
        found.index(step)
        explored.insert(step)
    dt = time.perf_counter() - t
    return dt, int(found.keys.sum() % (1 << 61)), len(found), len(explored)


def forked(keys):
    """The job in this process and in a child forked from it, at the same time."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its time through the pipe
        os.close(read)
        os.write(write, json.dumps(job(keys)).encode())
        os._exit(0)
    os.close(write)
    here = job(keys)
    there = tuple(json.loads(os.read(read, 1 << 16).decode()))
    os.close(read)
    os.waitpid(pid, 0)
    return here, there


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.repeat < 1:
        raise SystemExit(f"--repeat must be >= 1, got {args.repeat}")
    if not sys.platform.startswith("linux"):
        raise SystemExit("this benchmark forks: Linux only")
    keys = np.random.default_rng(0).integers(0, 2**40, size=(STEPS, WIDTH, 1), dtype=np.int64)
    huge = utils._numpy_huge_pages()
    print(f"NumPy advises huge pages here: {huge} (without, fresh_zeros is np.zeros and both rows agree)")
    times = {k: {"here": [], "parent": [], "child": []} for k in ("np.zeros", "fresh_zeros")}
    answers = set()
    for alloc in (reference, FRESH):
        utils.fresh_zeros = alloc
        job(keys)  # warm-up: kernels loaded, heap grown
    for _ in range(args.repeat):
        for kind, alloc in (("np.zeros", reference), ("fresh_zeros", FRESH)):
            utils.fresh_zeros = alloc
            r = job(keys)
            times[kind]["here"].append(r[0])
            p, c = forked(keys)
            times[kind]["parent"].append(p[0])
            times[kind]["child"].append(c[0])
            answers |= {r[1:], p[1:], c[1:]}
    utils.fresh_zeros = FRESH
    print(f"one share's two sets, {STEPS:,} steps of {WIDTH} keys; medians of {args.repeat} runs "
          f"(load average {os.getloadavg()[0]:.2f})")
    print("| where | np.zeros (ms) | fresh_zeros (ms) | np.zeros / fresh_zeros |")
    print("|---|---|---|---|")
    for place in ("here", "parent", "child"):
        a = statistics.median(times["np.zeros"][place])
        b = statistics.median(times["fresh_zeros"][place])
        print(f"| {place} | {1e3 * a:.1f} | {1e3 * b:.1f} | {a / b:.2f}x |")
    print(f"same keys in every run: {len(answers) == 1}")


if __name__ == "__main__":
    main()
