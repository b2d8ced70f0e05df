"""The one contract (issue 21) for the shuffle slice: results share the Result surface,
ShuffledModel is keyword-only after the model, old names warn, one random-state policy."""
import inspect

import numpy as np
import pytest

from fairlens.shuffle import ShuffledModel


def _f(X):
    A = np.asarray(X, dtype=float)
    return (A[:, 0] + A[:, 1]) / 2.0


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return np.column_stack([rng.random(40), rng.random(40), rng.integers(0, 2, 40)]).astype(float)


def test_shuffled_model_is_keyword_only_after_the_model():
    params = inspect.signature(ShuffledModel.__init__).parameters
    for name in ("protected", "favoured", "attack", "p", "random_state", "data", "favourable"):
        assert params[name].kind == inspect.Parameter.KEYWORD_ONLY, name
    assert list(params)[1] == "model"


def test_old_call_forms_are_a_type_error_naming_the_keywords(X):
    with pytest.raises(TypeError, match=r"^ShuffledModel: protected, favoured, attack, p must be passed by keyword"):
        ShuffledModel(_f, 2, 1, "mixing", 0.7, random_state=5)
    with pytest.raises(TypeError, match=r"^ShuffledModel: scorer= was renamed model=; pass model="):
        ShuffledModel(scorer=_f, protected=2, favoured=1, attack="mixing", p=0.7, random_state=5)
    for old, new in (("dataset", "data"), ("favourable_class", "favourable")):
        with pytest.raises(TypeError, match=rf"^ShuffledModel: {old}= was renamed {new}="):
            ShuffledModel(_f, protected=2, favoured=1, **{old: 1})
    m = ShuffledModel(_f, protected=2, favoured=1, attack="mixing", p=0.7, random_state=5)
    with pytest.raises(TypeError, match=r"^ShuffledModel.with_params: scorer= was renamed model="):
        m.with_params(scorer=_f)
    with pytest.raises(TypeError, match="favoured"):
        ShuffledModel(_f, protected=2)
