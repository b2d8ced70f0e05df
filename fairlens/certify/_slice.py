"""The certification slice, as the registry reads it (:mod:`fairlens._registry`)."""
from fairlens._registry import AuditCheck, SliceSpec

SLICE = SliceSpec(
    name="certify",
    title="Certified accuracy of tree ensembles under b-feature attacks",
    paper=("Stefano Calzavara, Claudio Lucchese, Federico Marcuzzi and Salvatore Orlando, \"Feature partitioning "
           "for robust tree ensembles and their certification in adversarial scenarios\", EURASIP Journal on "
           "Information Security 2021, article 12, doi:10.1186/s13635-021-00127-0"),
    module="fairlens.certify",
    analyses=("certify", "FeaturePartitionedForest"),
    widget="CoverVisualizer",
    check=AuditCheck("robustness", "Robustness to b-feature attacks", "fairlens.audit._robustness:check",
                     share=0.15, measures=("clean_accuracy", "accuracy_under_attack"),
                     applies="fairlens.audit._robustness:applies", order=40),
    tour="fairlens.tour._certify:section",
    warmup="fairlens.certify._warmup:warm",
    docs_page="papers/certify",
    tutorial="tutorials/04_certify_forests.ipynb",
    order=40,
)
