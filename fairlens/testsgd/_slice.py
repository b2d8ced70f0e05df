"""The TestSGD slice, as the registry reads it (:mod:`fairlens._registry`)."""
from fairlens._registry import AuditCheck, SliceSpec

SLICE = SliceSpec(
    name="testsgd",
    title="TestSGD: subtle group discrimination",
    paper=('Mengdi Zhang, Jun Sun, Jingyi Wang and Bing Sun, "TestSGD: Interpretable Testing of Neural Networks '
           'Against Subtle Group Discrimination"'),
    module="fairlens.testsgd",
    analyses=("TestSGD", "FairFictPlay"),
    widget="RuleSetBrowser",
    check=AuditCheck("subgroup", "Subgroup discrimination (TestSGD)", "fairlens.audit._subgroup:check",
                     share=0.30, measures=("subgroup_score",), order=20),
    tour="fairlens.tour._testsgd:section",
    warmup="fairlens.testsgd._warmup:warm",
    docs_page="papers/testsgd",
    tutorial="tutorials/03_testsgd.ipynb",
    order=30,
)
