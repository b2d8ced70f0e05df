"""Child process of ``tests/contract/test_interrupted_compile.py``: warm a slice's kernels with numba's
first compilation interrupted (a ``KeyboardInterrupt`` raised from numba's own compile event, as
Ctrl-C would), then warm again and print a probe of the slice's results.

    python tests/_interrupted_compile_child.py SLICE AT PHASE

PHASE ``interrupt``: the AT-th compilation is interrupted, then the slice is used again;
PHASE ``again``: a plain run (a new process reading the cache the interrupted one left).
"""
import importlib
import json
import sys

import numpy as np


def probe_shuffle():
    from fairlens.datasets import load_admission
    from fairlens.shuffle import ShuffledModel

    adm = load_admission(version="1")
    X = adm.X[:, [adm.index_of(c) for c in ("GRE Score", "TOEFL Score", "University Rating", "Research")]]
    X = (X - X.min(0)) / np.ptp(X, axis=0)

    def score(A):
        return np.asarray(A, dtype=float)[:, :3] @ np.full(3, 1 / 3)

    out = {}
    for attack in ("swapping", "mixing", "dominance"):
        m = ShuffledModel(score, protected=3, favoured=1, attack=attack, quantile=0.2, random_state=0)
        out[attack] = np.round(m.attack_batch(X).scores_after, 12).tolist()
    return out


def probe_testsgd():
    from fairlens.datasets import load_adult
    from fairlens.testsgd import TestSGD

    people = load_adult().subset(np.arange(1500))

    def model(X):  # a fixed scorer: the probe is about the kernels, not a trained network
        X = np.asarray(X, dtype=float)
        return 1 / (1 + np.exp(-(X[:, 0] - X[:, 0].mean()) / (X[:, 0].std() + 1e-9)))

    rep = TestSGD(model, people, protected=["sex", "race"], sample_thr=100, max_samples=300, random_state=0,
                  binning="round").run()
    return rep.to_frame().head(10).round(12).astype(str).to_dict("list")


PROBES = {"shuffle": probe_shuffle, "testsgd": probe_testsgd}


def main(slice_, at, phase):
    from numba.core import event

    class Interrupt(event.Listener):
        def __init__(self):
            self.n = 0

        def on_start(self, ev):
            self.n += 1
            if self.n == at:
                raise KeyboardInterrupt(f"test: compilation #{at} interrupted")

        def on_end(self, ev):
            pass

    warm = importlib.import_module(f"fairlens.{slice_}._warmup").warm
    out = {"interrupted": False, "compiles": 0}
    if phase == "interrupt":
        listener = Interrupt()
        event.register("numba:compile", listener)
        try:
            warm()
        except KeyboardInterrupt:
            out["interrupted"] = True
        finally:
            event.unregister("numba:compile", listener)
        out["compiles"] = listener.n
    warm()
    out["probe"] = PROBES[slice_]()
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
