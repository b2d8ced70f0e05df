"""The MAFT slice, as the registry reads it (:mod:`fairlens._registry`)."""
from fairlens._registry import AuditCheck, SliceSpec

SLICE = SliceSpec(
    name="maft",
    title="MAFT: black-box individual fairness testing",
    paper=('Zhaohui Wang, Min Zhang, Jingran Yang, Bojie Shao and Min Zhang, "MAFT: Efficient Model-Agnostic '
           'Fairness Testing for Deep Neural Networks via Zero-Order Gradient Search", ICSE 2024, '
           "doi:10.1145/3597503.3639181"),
    module="fairlens.maft",
    analyses=("MAFT", "EIDIG", "ADF", "AEQUITAS", "SG"),
    widget="MAFTSession",
    check=AuditCheck("individual", "Individual discrimination (MAFT)", "fairlens.audit._individual:check",
                     share=0.25, measures=("individual_discrimination_rate", "individual_instances_found"),
                     order=10),
    tour="fairlens.tour._maft:section",
    warmup="fairlens.maft._warmup:warm",
    docs_page="papers/maft",
    tutorial="tutorials/02_maft.ipynb",
    order=20,
)
