"""Compile and cache fairlens's numba kernels once, when the Binder image is built.

``binder/postBuild`` runs this with the same ``NUMBA_CACHE_DIR`` that ``binder/start`` gives the
notebook server, so a student's first Run All of ``tutorials/00_start_here.ipynb`` loads the
compiled kernels from the cache instead of compiling them (numba compiles one machine-code
version per argument type, so this runs the four widgets and analyses headless, on small slices
of the same bundled data and with the same dtypes the notebook uses).

Run it by hand with ``python binder/warmup.py`` (prints the time per slice).
"""
from __future__ import annotations

import sys
import time
import warnings


def _slices():
    """``{name: warm-up function}`` of every registered slice (:mod:`fairlens._registry`)."""
    from fairlens._registry import resolve, slices

    return {s.name: (lambda ref=s.warmup: resolve(ref)()) for s in slices() if s.warmup is not None}


def main(argv=None):
    """Warm every slice (or those named on the command line); returns the exit status."""
    import matplotlib

    matplotlib.use("Agg")
    warmups = _slices()
    names = list(argv if argv else warmups)
    failed = []
    for name in names:
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                warmups[name]()
            print(f"warmup {name}: {time.perf_counter() - t0:.1f} s", flush=True)
        except Exception as exc:  # a failed warm-up only costs the student the compile time
            failed.append(name)
            print(f"warmup {name}: FAILED ({type(exc).__name__}: {exc})", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
