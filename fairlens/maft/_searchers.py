"""The public searchers of :mod:`fairlens.maft` (MAFT, EIDIG, ADF, AEQUITAS) and their shared front end.

A searcher validates its parameters once (:data:`_COMMON_CONSTRAINTS`, scikit-learn's way),
adapts the model once, draws or checks the seeds, and hands each run to the two-phase engine
(:func:`fairlens.maft._search.run_two_phase`) as a :class:`~fairlens.maft._state.SearchSpec`; it
keeps no per-run state.  Every parameter of the searches (SG's included) is documented once, in
:data:`_PARAMETER_DOCS`; :func:`_document` writes each class's Parameters section from it, in
the order of the class's signature and with the class's own defaults.
"""
from __future__ import annotations

import abc
import functools
import inspect
import numbers
import textwrap

import numpy as np

from fairlens._base import Analysis, Interval, Options, resolve_random_state, strict_keywords
from fairlens._validation import check_int, check_memory

from ._gradients import LossGradientSource, OutputGradientSource, ZeroOrderSource, _check_h, _zo_bounds
from ._problem import _SIMILAR_COPIES, _Problem
from ._search import AEQUITAS_WALKS, GRADIENT_WALKS, run_two_phase
from ._state import SearchSpec
from ._utils import mlp_replay, resolve_scorer

__all__ = ["MAFT", "EIDIG", "ADF", "AEQUITAS"]

_RUN_MOVED = ("n_seeds", "n_local", "random_state", "engine", "seeds", "track_explored", "blas_threads")

#: The parameters every searcher shares, declared once (scikit-learn's way); the common tests
#: generate one invalid value per entry and check that it is refused by name.
_COMMON_CONSTRAINTS = {
    "protected": [None, str, numbers.Integral, list, tuple],
    "n_seeds": [Interval(numbers.Integral, 1, None)],
    "n_local": [Interval(numbers.Integral, 0, None)],
    "random_state": ["random_state"],
    "seeds": "no_validation",  # rows: checked against the domain by _Problem.check_rows
    "pool": "no_validation",  # rows: checked by _Problem
    "favourable": "no_validation",  # any class label: checked by the model adapter
    "max_iter": [Interval(numbers.Integral, 1, None)],
    "global_step": [Interval(numbers.Real, 0, None, closed="neither")],
    "local_step": [Interval(numbers.Real, 0, None, closed="neither")],
    "decay": [Interval(numbers.Real, 0, 1, closed="left")],
    "update_interval": [Interval(numbers.Integral, 1, None)],
    "n_clusters": [Interval(numbers.Integral, 1, None)],
    "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
    "engine": [Options("lockstep", "reference")],
    "track_explored": ["boolean"],
    "blas_threads": [None, Interval(numbers.Integral, 1, None)],
}

#: Every parameter of the searches, documented once (numpydoc entries; ``{default}`` is the
#: class's own default, read from its signature by :func:`_document`).  SG reads its shared
#: entries from here too and adds its own (``fairlens.maft._sg``).
_PARAMETER_DOCS = {
    "model": """model : estimator with ``predict_proba``, pipeline or callable
    Any binary model, adapted once by :func:`fairlens.models.as_scorer`: a pipeline
    fitted on the readable frame ``data.frame[data.feature_names]`` (rows are decoded
    before each call), an estimator fitted on the encoded ``data.X`` (array, or DataFrame
    in any column order: aligned by name) or a callable on encoded rows returning
    probabilities.  The search always runs in the encoded space;
    ``result.params["model_input"]`` says how the model was called.""",
    "data": """data : fairlens Dataset
    Supplies the seed pool (``X``), the input domain (``bounds``) and the names.""",
    "protected": """protected : list of str or int, optional
    Protected attributes (default ``data.protected``); integer-coded, with a few values.""",
    "n_seeds": """n_seeds : int, default={default}
    Seeds of the global phase (the paper's ``global_num``); ignored if ``seeds`` is given.""",
    "n_local": """n_local : int, default={default}
    Local iterations per unique global instance (``local_num``); 0 skips the local phase.""",
    "random_state": """random_state : int, numpy Generator/RandomState or None, default={default}
    Seeds selection and the local phase's random streams, resolved once per run by
    :func:`fairlens._base.resolve_random_state`; the int actually used is
    ``result.random_state`` (pass it back to repeat the run).""",
    "seeds": """seeds : array (n, d) or DataFrame, optional
    Explicit seeds in the encoded space (a DataFrame is aligned by column name),
    validated against the bounds.""",
    "pool": """pool : array (n, d) or DataFrame, optional
    Seed pool the seeds are drawn from (default ``data.X``), in the encoded space.""",
    "favourable": """favourable : default={default}
    The model class that is the favourable outcome (for a model fitted on the readable
    target labels, the dataset's favourable label is found automatically).""",
    "max_iter": """max_iter : int, default={default}
    Global iterations per seed (Algorithm 3's ``max_iter``).""",
    "global_step, local_step": """global_step, local_step : float, default={default}
    Step sizes of the global and local perturbations.""",
    "decay": """decay : float in [0, 1), default={default}
    Momentum of the global phase's gradients.""",
    "update_interval": """update_interval : int, default={default}
    Local iterations between two gradient refreshes (Algorithm 4's ``update_interval``).""",
    "n_clusters": """n_clusters : int, default={default}
    k-means clusters the seeds are drawn from, round robin.""",
    "epsilon": """epsilon : float > 0, default={default}
    Guard of the local attribute probabilities (``1 / (|g1| + |g2| + epsilon)``).""",
    "engine": """engine : {{"lockstep", "reference"}}, default={default}
    The batched engine or the literal one-seed-at-a-time twin (same instances).""",
    "track_explored": """track_explored : bool, default={default}
    Keep the set of generated instances (for ``success_rate``).""",
    "blas_threads": """blas_threads : int or None, default={default}
    Limit the BLAS thread pool during the run, here and in each worker
    (``threadpoolctl``): the model batches are small matrices, faster single-threaded.
    ``None`` leaves the pool alone.""",
    "h": """h : float > 0, default={default}
    Perturbation size of the zero-order gradient (RQ1 recommends 1.0).  For a
    readable-frame model an attribute at the top of its domain is differentiated
    one-sidedly (``x - h``): codes outside the domain have no label.""",
    "vectored": """vectored : bool, default={default}
    Algorithm 2 (one call per gradient batch) or Algorithm 1 (one call per attribute
    and point).""",
    "gradient": """gradient : callable, optional
    A callable mapping an ``(n, d)`` batch of encoded rows to ``d score / d x`` of shape
    ``(n, d)`` (score = favourable-class probability), e.g. from ``torch.autograd`` or
    ``tf.GradientTape``: any differentiable model.  Without it, a fitted scikit-learn
    ``MLPClassifier`` (possibly behind a scaler, as :func:`fairlens.models.train_mlp`
    returns it) is differentiated by :func:`fairlens.models.mlp_input_gradient`.  ADF turns
    it into the gradient of its cross-entropy loss.""",
    "change_size": """change_size : float in (0, 1], default={default}
    Reinforcement step of the adaptive probabilities.""",
}


def _format_default(value):
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float):
        return repr(value).replace("e-0", "e-")
    return repr(value)


def _parameters_section(cls, own=None):
    """The numpydoc Parameters section of ``cls``: one entry per parameter of its ``__init__``
    (in signature order), from ``own`` (the class's own entries) or :data:`_PARAMETER_DOCS`,
    with the class's defaults."""
    docs = {**_PARAMETER_DOCS, **(own or {})}
    by_name = {}
    for key in docs:
        for name in key.split(", "):
            by_name[name] = key
    entries, done = [], set()
    for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        key = by_name.get(p.name)
        if key is None:
            raise TypeError(f"{cls.__name__}: parameter {p.name!r} has no documentation entry")
        if key in done:
            continue
        done.add(key)
        default = "" if p.default is inspect.Parameter.empty else _format_default(p.default)
        entries.append(docs[key].format(default=default))
    return "Parameters\n----------\n" + "\n".join(entries)


def _document(cls=None, *, own=None):
    """Class decorator: write the Parameters section of ``cls`` (its docstring's ``{parameters}``
    line) from :data:`_PARAMETER_DOCS` and the class's ``own`` entries."""
    def deco(c):
        section = textwrap.indent(_parameters_section(c, own), "    ")
        if "    {parameters}\n" not in c.__doc__:
            raise TypeError(f"{c.__name__}: the docstring needs a '{{parameters}}' line")
        c.__doc__ = c.__doc__.replace("    {parameters}\n", section + "\n", 1)
        return c

    return deco if cls is None else deco(cls)


def _run_keywords(run):
    """``run`` takes ``stop=``, ``progress=``, ``n_jobs=`` and ``callback=`` only: the
    ``run(n_seeds, n_local, random_state=..., engine=..., seeds=...)`` of earlier releases is a
    ``TypeError`` saying the values go to the constructor now; any other keyword a ``TypeError``
    naming it."""
    @functools.wraps(run)
    def wrapper(self, *args, **kwargs):
        name = type(self).__name__
        moved = [k for k in kwargs if k in _RUN_MOVED]
        old_form = args and len(args) <= 3 and all(isinstance(a, numbers.Integral) or a is None for a in args)
        if args and not old_form:
            raise TypeError(f"{name}.run() takes keyword arguments only: stop=, progress=, n_jobs=, callback= "
                            f"(got {len(args)} positional).")
        if args or moved:
            given = moved or list(_RUN_MOVED[:len(args)])
            raise TypeError(
                f"{name}.run: {', '.join(k + '=' for k in given)} moved to the constructor; pass "
                f"{name}(model, data, ..., {', '.join(k + '=...' for k in given)}) and call run() with "
                "stop=/progress=/n_jobs=/callback= only."
            )
        if "block_size" in kwargs:
            raise TypeError(f"{name}.run: block_size= was removed (the result no longer depends on any cut "
                            "of the seeds); drop the argument.")
        unknown = [k for k in kwargs if k not in ("stop", "progress", "n_jobs", "callback")]
        if unknown:
            raise TypeError(f"{name}.run() got an unexpected keyword argument {unknown[0]!r}; run() takes "
                            f"stop=, progress=, n_jobs= and callback= (configure everything else in {name}(...)).")
        return run(self, **kwargs)

    return wrapper


class _TwoPhaseSearch(Analysis, abc.ABC):
    """Shared front end: validation, seeds, engines, result assembly."""

    method = "?"
    _parameter_constraints = dict(_COMMON_CONSTRAINTS)

    def __init__(
        self,
        model,
        data,
        *,
        protected=None,
        n_seeds=1000,
        n_local=1000,
        random_state=0,
        seeds=None,
        pool=None,
        favourable=1,
        max_iter=10,
        global_step=1.0,
        local_step=1.0,
        decay=0.5,
        update_interval=5,
        n_clusters=4,
        epsilon=1e-6,
        engine="lockstep",
        track_explored=True,
        blas_threads=1,
    ):
        self.model = model
        self.data = data
        self.protected = protected
        self.n_seeds, self.n_local, self.random_state = n_seeds, n_local, random_state
        self.seeds, self.pool, self.favourable = seeds, pool, favourable
        self.max_iter, self.global_step, self.local_step = max_iter, global_step, local_step
        self.decay, self.update_interval, self.n_clusters, self.epsilon = decay, update_interval, n_clusters, epsilon
        self.engine, self.track_explored, self.blas_threads = engine, track_explored, blas_threads
        self._validate_params()
        self.problem = _Problem(data, protected, pool)
        self.protected = self.problem.protected
        # the model is adapted ONCE: readable-frame pipeline, encoded DataFrame (aligned by
        # column name), encoded array or callable -- rows always travel in the encoded space
        self.scorer = resolve_scorer(model, data, favourable)
        # one probe call: fails early (clear error) on a model without probabilities
        probe = np.asarray(self.scorer(self.problem.pool[:2]), dtype=np.float64)
        if probe.shape != (min(2, self.problem.pool.shape[0]),):
            raise TypeError("model must return one favourable-class probability per row.")
        if seeds is not None:
            self._check_seeds(seeds)

    @property
    def dataset(self):
        """The Dataset the search runs on (``data``; the old name, kept for reading)."""
        return self.data

    def _check_seeds(self, seeds):
        seeds = self.problem.check_rows(seeds)
        if seeds.shape[0] == 0:
            raise ValueError("seeds is empty: pass at least one seed row.")
        return seeds

    #: ``set_params`` (the base's) refuses these: they shape the search space; build a new object
    _fixed_params = frozenset({"model", "data", "protected", "pool", "favourable"})

    # -- hooks
    #: The method's phases (:class:`~fairlens.maft._state.Walks`).
    _walks = GRADIENT_WALKS

    #: Model rows a gradient point costs (see :class:`~fairlens.maft._state.SearchSpec`).
    _gradient_rows = 0

    @abc.abstractmethod
    def _source_factory(self):
        """``f(counting_scorer) -> gradient source`` of the method (zero-order, output or loss
        gradient), picklable; None for a method without gradients."""

    def _spec(self, replay):
        """This run's :class:`~fairlens.maft._state.SearchSpec` (``replay``: the model's exact
        replay checked on the run's seeds, or None)."""
        return SearchSpec(method=self.method, problem=self.problem, scorer=self.scorer, replay=replay,
                          source=self._source_factory(), walks=self._walks, gradient_rows=self._gradient_rows,
                          max_iter=self.max_iter,
                          n_local=self.n_local, global_step=self.global_step, local_step=self.local_step,
                          decay=self.decay, update_interval=self.update_interval, epsilon=self.epsilon,
                          change_size=getattr(self, "change_size", None), engine=self.engine,
                          track_explored=self.track_explored, blas_threads=self.blas_threads)

    def _result_params(self):
        return {
            "max_iter": self.max_iter,
            "global_step": self.global_step,
            "local_step": self.local_step,
            "decay": self.decay,
            "update_interval": self.update_interval,
            "n_clusters": self.n_clusters,
            "epsilon": self.epsilon,
            "protected": list(self.protected),
            "favourable": self.scorer.favourable_class,
            "model_input": self.scorer.describe(),
        }

    def draw_seeds(self, n_seeds=None, random_state=None):
        """The seeds a run draws for ``(n_seeds, random_state)`` (default: this object's).

        Parameters
        ----------
        n_seeds : int, optional
            Default ``self.n_seeds``.
        random_state : int, Generator, RandomState or None, optional
            Default ``self.random_state``; resolved by
            :func:`fairlens._base.resolve_random_state`.

        Returns
        -------
        ndarray (n_seeds, d)
            k-means clusters of the pool sampled round robin (the whole pool if
            ``n_seeds`` is at least its size).
        """
        n_seeds = self.n_seeds if n_seeds is None else check_int("n_seeds", n_seeds, min=1)
        seed = resolve_random_state(self.random_state if random_state is None else random_state)
        return self.problem.pool_seeds(n_seeds, self.n_clusters, seed)

    @_run_keywords
    def run(self, *, stop=None, progress=None, n_jobs=None, callback=None):
        """Run the global then the local phase.

        Parameters
        ----------
        stop : threading.Event or callable, optional
            The one stop convention of fairlens: a ``threading.Event`` (stop when set) or a
            zero-argument callable (stop when it returns true).  Checked after every step in
            this process -- with several processes also in the share this process works, after
            which the run returns without waiting for the workers' shares (their instances are
            left out) -- and between finished tasks; the run then returns what it found so far
            (``result.stopped``).
        progress : bool or callable, optional
            ``True`` shows a ``tqdm`` bar; a callable is called as ``progress(stage, done, total)``
            after every step (``stage`` ``"global"`` or ``"local"``: steps of the current phase)
            or finished task (``stage`` ``"tasks"``).  A callable that cannot take three
            positional arguments is refused with a ``TypeError`` before the run starts.
        n_jobs : int or None, default=None
            Workers, scikit-learn's convention: ``None`` means 1 unless inside
            ``joblib.parallel_config(n_jobs=...)``, ``-1`` all cores (or all dask workers under
            ``joblib.parallel_config(backend="dask")``).  ``n_jobs`` processes each walk a
            share of the seeds (global phase), then of the unique global instances (local
            phase), in lockstep: this process works the first share while the workers run the
            others (on dask only when the cluster is a ``LocalCluster``; a remote cluster's
            workers get every share).  A phase too small to gain (fewer than
            :data:`~fairlens.maft._plan.MIN_PARALLEL_ROWS` model rows at most) runs in this
            process, and so does a phase whose model costs mostly per *call* rather than per row
            (probed on the model: the shares cut the rows of each call, not the number of calls,
            so a Keras model called eagerly, about 10 ms per call, gains nothing;
            :data:`~fairlens.maft._plan.MIN_PARALLEL_GAIN`); ``result.params["parallel"]`` says
            what ran where and why.  The instances found are the same at every ``n_jobs``.
        callback : callable, optional
            Called with a dict (``phase``, ``step``, ``total``, ``n_global``, ``n_total``,
            ``elapsed``) after every step in this process; with several workers after each
            finished task, with ``phase="tasks"``.

        Returns
        -------
        FairnessTestResult

        Raises
        ------
        TypeError
            For any keyword but these four; ``run(n_seeds, n_local, random_state=...,
            engine=..., seeds=...)`` of earlier releases names the constructor keywords to use.
        ValueError
            For out-of-range parameters, and when the similar instances of the walkers
            (``n_seeds x`` the number of protected-value combinations) would not fit in
            memory: the message names the estimate and the remedy.

        Notes
        -----
        **As the paper and the authors' code.**  The global instances of ALL seeds are
        de-duplicated (in seed order) before the local phase; each unique global instance
        is one local walker (``result.n_global`` of them, ``params["n_walkers"]``).  Local
        walker ``w`` draws its random numbers from the counter-based stream
        ``(key, w, iteration)`` (``key`` from ``random_state``), so a walk does not depend
        on the other walkers, on how the walkers are cut into shares, on ``n_jobs`` or on the
        backend.  Local instances are kept once, in the order Algorithm 4 finds them
        (walker after walker), global instances excluded.

        **Same answer at every n_jobs**, for any model that scores a row independently of
        the other rows of its batch (scikit-learn's trees and forests, the callables of the
        tests, dense networks except where the BLAS library rounds a row differently in
        another batch size, in the last bit).  ``model_calls``, ``queries`` and ``elapsed``
        depend on ``n_jobs``; everything else does not.

        **What a task carries and returns.**  The search (the model adapter, the domain and
        the protected combinations) and the seeds or walkers travel once per call in a
        :class:`fairlens._parallel.Payload`; a task returns its hits or its unique local
        instances as one int64 key per row (on an integer grid; the counterparts as their
        protected values) and its explored rows as keys; this process merges each share as
        it arrives with one linear pass of a hash set (the explored rows into a
        membership-only set), then decodes every row once into the result's arrays.

        Every step is a bounded model call plus short kernel calls, so a
        ``KeyboardInterrupt`` arrives as ``KeyboardInterrupt`` within one step; the search
        object holds no per-run state and can be run again.
        """
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be None or a callable taking a dict, got {type(callback).__name__}.")
        stop, report, n_jobs, seed, _ = self._start(stop, progress, n_jobs, desc=self.method)
        seeds = self._run_seeds(seed)
        self._check_run_memory(seeds)
        # scikit-learn MLPs: an exact replay without the per-call validation (checked bit for bit
        # on the seeds, else the model is called as usual); it travels to the workers in the spec
        spec = self._spec(mlp_replay(self.scorer, seeds[:256]) if self.engine == "lockstep" else None)
        return run_two_phase(spec, seeds, seed, n_jobs=n_jobs, stop=stop, report=report, callback=callback,
                             params=self._result_params(), dataset=self.data)

    _seeds_from_pool = True

    def _run_seeds(self, seed):
        """The seeds of this run (explicit ``seeds`` or drawn with ``seed``), memory-checked."""
        if self.seeds is None:
            n_walkers = min(self.n_seeds, self.problem.pool.shape[0]) if self._seeds_from_pool else self.n_seeds
            self.problem.check_similar_memory(n_walkers, f"{self.method}.run", _SIMILAR_COPIES, "seeds")
            return self.draw_seeds(self.n_seeds, seed)
        seeds = self._check_seeds(self.seeds)
        self.problem.check_similar_memory(seeds.shape[0], f"{self.method}.run", _SIMILAR_COPIES, "seeds")
        return seeds

    def _check_run_memory(self, seeds):
        """Worst case: every step of every walker yields a new row (found and explored sets,
        with their hash tables and growth copies, plus the counterparts)."""
        rows = float(seeds.shape[0]) * (self.max_iter + self.n_local)
        d = self.problem.d
        check_memory(
            rows * ((2 * 8 * d + 16) * (3 if self.track_explored else 2) + 8 * d),
            f"{self.method}.run: the instance sets for {seeds.shape[0]:,} seeds x "
            f"{self.max_iter + self.n_local:,} steps",
            "use fewer seeds or a smaller n_local (run several times with different random_state), "
            "or pass track_explored=False.",
        )


_BASE_ARGS = ("protected", "n_seeds", "n_local", "random_state", "seeds", "pool", "favourable", "max_iter",
              "global_step", "local_step", "decay", "update_interval", "n_clusters", "epsilon", "engine",
              "track_explored", "blas_threads")


#: Earlier releases took ``Cls(model, data, protected)`` and ``favourable_class=``: both are a
#: ``TypeError`` naming the keyword to use, as is any keyword a searcher does not take.
_searcher_keywords = strict_keywords(renamed={"favourable_class": "favourable"}, keyword_only=("protected",))


def _base_kwargs(loc):
    """The base-class keyword arguments out of a subclass ``__init__``'s ``locals()``."""
    return {k: loc[k] for k in _BASE_ARGS}


@_document
class MAFT(_TwoPhaseSearch):
    """Model-Agnostic Fairness Testing (Wang et al., ICSE 2024).

    Black-box: EIDIG's two-phase search (Algorithms 3 and 4) driven by the vectored
    zero-order gradient of the model's confidence (Algorithm 2).

    {parameters}

    Raises
    ------
    TypeError, ValueError
        For a parameter that is refused (the message names it, the value and what is valid),
        a model without probabilities, or protected attributes whose combinations cannot be
        enumerated.

    See Also
    --------
    EIDIG, ADF, AEQUITAS, SG : the baselines, same parameters and result.

    Examples
    --------
    >>> from fairlens.maft import MAFT
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.linear_model import LogisticRegression
    >>> census = load_dataset("census", encoding="benchmark")
    >>> model = LogisticRegression(max_iter=500).fit(census.X[:2000], census.y[:2000])
    >>> res = MAFT(model, census, protected=["sex"], n_seeds=20, n_local=20, random_state=0).run()
    >>> res.summary().shape
    (1, 11)
    """

    method = "MAFT"
    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "h": [Interval(numbers.Real, 0, None, closed="neither")],
        "vectored": ["boolean"],
    }

    @_searcher_keywords
    def __init__(self, model, data, *, protected=None, n_seeds=1000, n_local=1000, random_state=0, seeds=None,
                 pool=None, favourable=1, max_iter=10, global_step=1.0, local_step=1.0, decay=0.5,
                 update_interval=5, n_clusters=4, epsilon=1e-6, engine="lockstep", track_explored=True,
                 blas_threads=1, h=1.0, vectored=True):
        self.h, self.vectored = h, vectored
        super().__init__(model, data, **_base_kwargs(locals()))
        self.h = _check_h(h)
        self._zo_bounds = _zo_bounds(self.scorer, data)  # computed here: workers get no dataset

    def _result_params(self):
        p = super()._result_params()
        p.update(h=self.h, vectored=self.vectored)
        return p

    def _source_factory(self):
        return functools.partial(ZeroOrderSource, h=self.h, vectored=self.vectored, bounds=self._zo_bounds)

    @property
    def _gradient_rows(self):
        return self.problem.d + 1  # Algorithm 2: x and x + h e_i for every attribute (Algorithm 1: at most)


class _WhiteBox(_TwoPhaseSearch):
    _source_cls = None
    _gradient_rows = 2  # the point's forward row and its gradient row
    _parameter_constraints = {**_COMMON_CONSTRAINTS, "gradient": [None, "callable"]}

    def _init_white_box(self, model, data, gradient, kw):
        self.gradient = gradient
        super().__init__(model, data, **kw)
        src = self._source_cls(model, self.scorer, self.problem.d, gradient)  # validates early
        if gradient is not None:
            src.proba_gradient(np.ascontiguousarray(self.problem.pool[:2]))

    def _result_params(self):
        p = super()._result_params()
        p["gradient"] = "user gradient=" if self.gradient is not None else "analytic MLPClassifier gradient"
        return p

    def _source_factory(self):
        return functools.partial(self._source_cls, self.model, n_features=None, gradient=self.gradient)


@_document
class EIDIG(_WhiteBox):
    """EIDIG (Zhang et al., ISSTA 2021): the same search with the *analytic* gradient of the
    output probability (white-box).

    {parameters}

    Raises
    ------
    TypeError, ValueError
        As :class:`MAFT`; also when no gradient is available for the model.

    Examples
    --------
    >>> from fairlens.maft import EIDIG
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.neural_network import MLPClassifier
    >>> census = load_dataset("census", encoding="benchmark")
    >>> mlp = MLPClassifier((16,), max_iter=300, random_state=0).fit(census.X[:2000], census.y[:2000])
    >>> EIDIG(mlp, census, protected=["sex"], n_seeds=10, n_local=10).run().n_global >= 0
    True
    """

    method = "EIDIG"
    _source_cls = OutputGradientSource

    @_searcher_keywords
    def __init__(self, model, data, *, protected=None, n_seeds=1000, n_local=1000, random_state=0, seeds=None,
                 pool=None, favourable=1, max_iter=10, global_step=1.0, local_step=1.0, decay=0.5,
                 update_interval=5, n_clusters=4, epsilon=1e-6, engine="lockstep", track_explored=True,
                 blas_threads=1, gradient=None):
        self._init_white_box(model, data, gradient, _base_kwargs(locals()))


@_document
class ADF(_WhiteBox):
    """ADF (Zhang et al., ICSE 2020): gradient of the loss, its sign, no momentum
    (``decay=0``) and a fresh gradient at every local iteration (``update_interval=1``);
    white-box like :class:`EIDIG` (same ``gradient=``: ``d score / d x``, turned into the
    cross-entropy gradient here).

    {parameters}

    Raises
    ------
    TypeError, ValueError
        As :class:`EIDIG`.

    Notes
    -----
    ``decay`` defaults to 0.0 and ``update_interval`` to 1 here (ADF's algorithm: no momentum,
    a fresh gradient at every local iteration).

    Examples
    --------
    >>> from fairlens.maft import ADF
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.neural_network import MLPClassifier
    >>> census = load_dataset("census", encoding="benchmark")
    >>> mlp = MLPClassifier((16,), max_iter=300, random_state=0).fit(census.X[:2000], census.y[:2000])
    >>> ADF(mlp, census, protected=["sex"], n_seeds=10, n_local=10).run().n_global >= 0
    True
    """

    method = "ADF"
    _source_cls = LossGradientSource

    @_searcher_keywords
    def __init__(self, model, data, *, protected=None, n_seeds=1000, n_local=1000, random_state=0, seeds=None,
                 pool=None, favourable=1, max_iter=10, global_step=1.0, local_step=1.0, decay=0.0,
                 update_interval=1, n_clusters=4, epsilon=1e-6, engine="lockstep", track_explored=True,
                 blas_threads=1, gradient=None):
        self._init_white_box(model, data, gradient, _base_kwargs(locals()))


@_document
class AEQUITAS(_TwoPhaseSearch):
    """AEQUITAS (Udeshi et al., ASE 2018) as re-implemented by the MAFT authors.

    Global phase: ``n_seeds`` points drawn uniformly from the integer grid of the input domain
    (not from the data); the discriminatory ones seed the local phase.  Local phase: pick an
    attribute with adaptive weights and a direction with adaptive per-attribute probabilities
    (both shared by groups of 256 consecutive walkers and reinforced by success, change size 0.001), step,
    keep on success, reset to the seed on failure.  Protected attributes get weight 0 here
    (perturbing them is meaningless: every value is already in the similar set).

    {parameters}

    Raises
    ------
    TypeError, ValueError
        As :class:`MAFT`.

    Examples
    --------
    >>> from fairlens.maft import AEQUITAS
    >>> from fairlens.datasets import load_dataset
    >>> from sklearn.linear_model import LogisticRegression
    >>> census = load_dataset("census", encoding="benchmark")
    >>> model = LogisticRegression(max_iter=500).fit(census.X[:2000], census.y[:2000])
    >>> AEQUITAS(model, census, protected=["sex"], n_seeds=50, n_local=10).run().method
    'AEQUITAS'
    """

    method = "AEQUITAS"
    _seeds_from_pool = False
    _parameter_constraints = {**_COMMON_CONSTRAINTS, "change_size": [Interval(numbers.Real, 0, 1, closed="right")]}

    @_searcher_keywords
    def __init__(self, model, data, *, protected=None, n_seeds=1000, n_local=1000, random_state=0, seeds=None,
                 pool=None, favourable=1, max_iter=10, global_step=1.0, local_step=1.0, decay=0.5,
                 update_interval=5, n_clusters=4, epsilon=1e-6, engine="lockstep", track_explored=True,
                 blas_threads=1, change_size=0.001):
        self.change_size = change_size
        super().__init__(model, data, **_base_kwargs(locals()))

    def _result_params(self):
        p = super()._result_params()
        p["change_size"] = self.change_size
        return p

    _walks = AEQUITAS_WALKS

    def _source_factory(self):
        return None

    def draw_seeds(self, n_seeds=None, random_state=None):
        """Uniform random points of the integer grid of the domain.

        Parameters
        ----------
        n_seeds : int, optional
            Default ``self.n_seeds``.
        random_state : int, Generator, RandomState or None, optional
            Default ``self.random_state``.

        Returns
        -------
        ndarray (n_seeds, d)
            Integer points drawn uniformly in ``[ceil(lo), floor(hi)]`` of every feature
            (the same for the same ``random_state``).

        Examples
        --------
        >>> import numpy as np
        >>> from fairlens.maft import AEQUITAS
        >>> from fairlens.datasets import load_dataset
        >>> from sklearn.linear_model import LogisticRegression
        >>> census = load_dataset("census", encoding="benchmark")
        >>> model = LogisticRegression(max_iter=500).fit(census.X[:2000], census.y[:2000])
        >>> aeq = AEQUITAS(model, census, protected=["sex"], n_seeds=5, random_state=0)
        >>> seeds = aeq.draw_seeds()
        >>> seeds.shape, bool(np.all(seeds == np.round(seeds)))
        ((5, 12), True)
        >>> np.array_equal(aeq.draw_seeds(random_state=0), seeds)
        True
        """
        n_seeds = self.n_seeds if n_seeds is None else check_int("n_seeds", n_seeds, min=1)
        pb = self.problem
        rng = np.random.default_rng(resolve_random_state(self.random_state if random_state is None else random_state))
        lo = np.ceil(pb.lo)
        hi = np.floor(pb.hi)
        return np.ascontiguousarray(lo + np.floor(rng.random((n_seeds, pb.d)) * (hi - lo + 1.0)))
