"""The shuffling-attack slice, as the registry reads it (:mod:`fairlens._registry`)."""
from fairlens._registry import AuditCheck, SliceSpec

SLICE = SliceSpec(
    name="shuffle",
    title="Shuffling attacks hide a protected feature from SHAP",
    paper='Jun Yuan and Aritra Dasgupta, "Fooling SHAP with Output Shuffling Attacks"',
    module="fairlens.shuffle",
    analyses=("ShuffledModel", "batch_consistency", "attributions"),
    widget="ShuffleAttackExplorer",
    check=AuditCheck("explanations", "Explanations and output shuffling", "fairlens.audit._explanations:check",
                     share=0.20, measures=("batch_inconsistency", "protected_attribution_share"), order=30),
    tour="fairlens.tour._shuffle:section",
    warmup="fairlens.shuffle._warmup:warm",
    docs_page="papers/shuffle",
    tutorial="tutorials/01_shuffling_attacks.ipynb",
    order=10,
)
