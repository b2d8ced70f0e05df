"""Write the local intersphinx inventories the docs use instead of downloading any.

Each entry names an object of another project that fairlens docstrings mention, with the page
of that project's online documentation it links to. Sphinx reads these files from disk, so the
build never reaches the network; readers following a link go to the real documentation.

Run ``python docs/_inventories/make_inventory.py`` after adding an entry (the .inv files are
committed).
"""
from __future__ import annotations

import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

# project -> (base URL, version, [(name, role, relative URI)])
PROJECTS = {
    "python": ("https://docs.python.org/3/", "3", [
        ("int", "py:class", "library/functions.html#int"),
        ("float", "py:class", "library/functions.html#float"),
        ("str", "py:class", "library/stdtypes.html#str"),
        ("bool", "py:class", "library/functions.html#bool"),
        ("bytes", "py:class", "library/stdtypes.html#bytes"),
        ("list", "py:class", "library/stdtypes.html#list"),
        ("tuple", "py:class", "library/stdtypes.html#tuple"),
        ("dict", "py:class", "library/stdtypes.html#dict"),
        ("set", "py:class", "library/stdtypes.html#set"),
        ("frozenset", "py:class", "library/stdtypes.html#frozenset"),
        ("object", "py:class", "library/functions.html#object"),
        ("slice", "py:class", "library/functions.html#slice"),
        ("range", "py:class", "library/stdtypes.html#range"),
        ("None", "py:data", "library/constants.html#None"),
        ("True", "py:data", "library/constants.html#True"),
        ("False", "py:data", "library/constants.html#False"),
        ("Ellipsis", "py:data", "library/constants.html#Ellipsis"),
        ("ValueError", "py:exc", "library/exceptions.html#ValueError"),
        ("TypeError", "py:exc", "library/exceptions.html#TypeError"),
        ("KeyError", "py:exc", "library/exceptions.html#KeyError"),
        ("RuntimeError", "py:exc", "library/exceptions.html#RuntimeError"),
        ("OSError", "py:exc", "library/exceptions.html#OSError"),
        ("ImportError", "py:exc", "library/exceptions.html#ImportError"),
        ("FileNotFoundError", "py:exc", "library/exceptions.html#FileNotFoundError"),
        ("Exception", "py:exc", "library/exceptions.html#Exception"),
        ("FutureWarning", "py:exc", "library/exceptions.html#FutureWarning"),
        ("UserWarning", "py:exc", "library/exceptions.html#UserWarning"),
        ("threading.Event", "py:class", "library/threading.html#threading.Event"),
        ("pathlib.Path", "py:class", "library/pathlib.html#pathlib.Path"),
        ("os.PathLike", "py:class", "library/os.html#os.PathLike"),
        ("typing.NamedTuple", "py:class", "library/typing.html#typing.NamedTuple"),
        ("collections.abc.Callable", "py:class", "library/collections.abc.html#collections.abc.Callable"),
        ("collections.abc.Sequence", "py:class", "library/collections.abc.html#collections.abc.Sequence"),
        ("collections.abc.Mapping", "py:class", "library/collections.abc.html#collections.abc.Mapping"),
        ("datetime.datetime", "py:class", "library/datetime.html#datetime.datetime"),
        ("enumerate", "py:class", "library/functions.html#enumerate"),
        # targets of numpydoc's default type aliases (numpydoc.xref.DEFAULT_LINKS)
        ("bltin-boolean-values", "std:label", "library/stdtypes.html#bltin-boolean-values"),
        ("callable", "py:function", "library/functions.html#callable"),
        ("iterable", "std:term", "glossary.html#term-iterable"),
        ("sequence", "std:term", "glossary.html#term-sequence"),
        ("generator", "std:term", "glossary.html#term-generator"),
        ("contextlib.contextmanager", "py:function", "library/contextlib.html#contextlib.contextmanager"),
        ("collections.namedtuple", "py:function", "library/collections.html#collections.namedtuple"),
    ]),
    "numpy": ("https://numpy.org/doc/stable/", "2", [
        ("numpy.ndarray", "py:class", "reference/generated/numpy.ndarray.html#numpy.ndarray"),
        ("numpy.dtype", "py:class", "reference/generated/numpy.dtype.html#numpy.dtype"),
        ("numpy.random.Generator", "py:class", "reference/random/generator.html#numpy.random.Generator"),
        ("numpy.random.RandomState", "py:class", "reference/random/legacy.html#numpy.random.RandomState"),
        ("numpy.random.default_rng", "py:function", "reference/random/generator.html#numpy.random.default_rng"),
        ("numpy.float64", "py:class", "reference/arrays.scalars.html#numpy.float64"),
        ("numpy.int64", "py:class", "reference/arrays.scalars.html#numpy.int64"),
        ("numpy.bool_", "py:class", "reference/arrays.scalars.html#numpy.bool_"),
        ("numpy", "py:module", "reference/index.html#module-numpy"),
        ("numpy.inf", "py:data", "reference/constants.html#numpy.inf"),
        ("numpy.nan", "py:data", "reference/constants.html#numpy.nan"),
        ("array_like", "std:term", "glossary.html#term-array_like"),
        ("arrays.scalars", "std:label", "reference/arrays.scalars.html#arrays-scalars"),
    ]),
    "pandas": ("https://pandas.pydata.org/docs/", "2", [
        ("pandas.DataFrame", "py:class", "reference/api/pandas.DataFrame.html#pandas.DataFrame"),
        ("pandas.Series", "py:class", "reference/api/pandas.Series.html#pandas.Series"),
        ("pandas.Index", "py:class", "reference/api/pandas.Index.html#pandas.Index"),
        ("pandas.Categorical", "py:class", "reference/api/pandas.Categorical.html#pandas.Categorical"),
    ]),
    "matplotlib": ("https://matplotlib.org/stable/", "3", [
        ("matplotlib.figure.Figure", "py:class", "api/_as_gen/matplotlib.figure.Figure.html#matplotlib.figure.Figure"),
        ("matplotlib.axes.Axes", "py:class", "api/_as_gen/matplotlib.axes.Axes.html#matplotlib.axes.Axes"),
    ]),
    "sklearn": ("https://scikit-learn.org/stable/", "1", [
        ("sklearn.neural_network.MLPClassifier", "py:class",
         "modules/generated/sklearn.neural_network.MLPClassifier.html#sklearn.neural_network.MLPClassifier"),
        ("sklearn.ensemble.RandomForestClassifier", "py:class",
         "modules/generated/sklearn.ensemble.RandomForestClassifier.html#sklearn.ensemble.RandomForestClassifier"),
        ("sklearn.ensemble.ExtraTreesClassifier", "py:class",
         "modules/generated/sklearn.ensemble.ExtraTreesClassifier.html#sklearn.ensemble.ExtraTreesClassifier"),
        ("sklearn.ensemble.GradientBoostingClassifier", "py:class",
         "modules/generated/sklearn.ensemble.GradientBoostingClassifier.html#sklearn.ensemble.GradientBoostingClassifier"),
        ("sklearn.ensemble.HistGradientBoostingClassifier", "py:class",
         "modules/generated/sklearn.ensemble.HistGradientBoostingClassifier.html#sklearn.ensemble.HistGradientBoostingClassifier"),
        ("sklearn.tree.DecisionTreeClassifier", "py:class",
         "modules/generated/sklearn.tree.DecisionTreeClassifier.html#sklearn.tree.DecisionTreeClassifier"),
        ("sklearn.pipeline.Pipeline", "py:class",
         "modules/generated/sklearn.pipeline.Pipeline.html#sklearn.pipeline.Pipeline"),
        ("sklearn.base.BaseEstimator", "py:class",
         "modules/generated/sklearn.base.BaseEstimator.html#sklearn.base.BaseEstimator"),
        ("sklearn.base.ClassifierMixin", "py:class",
         "modules/generated/sklearn.base.ClassifierMixin.html#sklearn.base.ClassifierMixin"),
        ("sklearn.linear_model.LogisticRegression", "py:class",
         "modules/generated/sklearn.linear_model.LogisticRegression.html#sklearn.linear_model.LogisticRegression"),
    ]),
    "ipywidgets": ("https://ipywidgets.readthedocs.io/en/stable/", "8", [
        ("ipywidgets.VBox", "py:class", "reference/ipywidgets.html#ipywidgets.widgets.widget_box.VBox"),
        ("ipywidgets.widgets.widget_box.VBox", "py:class", "reference/ipywidgets.html#ipywidgets.widgets.widget_box.VBox"),
    ]),
}


def write(name, base, version, entries):
    head = (f"# Sphinx inventory version 2\n# Project: {name}\n# Version: {version}\n"
            "# The remainder of this file is compressed using zlib.\n").encode()
    body = "".join(f"{obj} {role} 1 {uri} -\n" for obj, role, uri in entries).encode()
    (HERE / f"{name}.inv").write_bytes(head + zlib.compress(body, 9))


if __name__ == "__main__":
    for name, (base, version, entries) in PROJECTS.items():
        write(name, base, version, entries)
        print(f"{name}.inv: {len(entries)} entries -> {base}")
