r"""GTH-GMN: the temporal hyperbolic graph meta-network (ICLR 2026, OpenReview Xq64xkQCak).

A meta-network that reads the *training trajectory* of an MLP -- ``T`` snapshots, each a parameter
graph (neurons and bias nodes; signed weights as edges) -- embeds every node of every snapshot in the
Poincaré ball, and predicts a property of the network from that embedding (GTH-GMN paper, §method).

The package, by job:

- :mod:`.config` -- :class:`GTHGMNConfig` (sizes, curvature, the link reading, protocols, loss weights);
- :mod:`.encoder` -- node coordinates per snapshot: tangent-space encoders (with free node radii),
  hyperbolic graph attention, EvolveGCN-style kernel evolution by grouped GRUs;
- :mod:`.links` -- what the link decoder reconstructs: the literal graph (every nonzero weight) or
  the strong-connection graph (top-``q`` weights of each layer block), pair sets, AUCs by kind of
  negative, and the decoder's ceiling with free node positions;
- :mod:`.decoders` -- the signed-weight head (power-law magnitude, tangent-space sign), the
  Fermi-Dirac decoder, the reconstruction losses (sampled for stage 1, every pair for stage 2) and
  the reconstruction metrics against the baselines a decoder must beat;
- :mod:`.recon_baselines` -- those baselines, each metric judged against its own, and the report in words of
  which metrics beat their baseline and which do not;
- :mod:`.refine` -- stage 2: Riemannian refinement of every snapshot's coordinates over every pair;
- :mod:`.model` -- :class:`GTHGMN`: the meta-network, its protocols and trajectory embeddings.
"""

from hgutils.weightspace.metanets.gth_gmn.config import (
    AUX_TERMS,
    CITATION,
    LINK_READINGS,
    PROTOCOLS,
    REFINE_TERMS,
    GTHGMNConfig,
)
from hgutils.weightspace.metanets.gth_gmn.links import PairSets, edge_labels, link_ceiling
from hgutils.weightspace.metanets.gth_gmn.model import GTHGMN
from hgutils.weightspace.metanets.gth_gmn.recon_baselines import (
    RECON_BASELINES,
    ReconBaseline,
    baseline_phrase,
    baseline_sentence,
    compare_to_baselines,
)

__all__ = [
    "AUX_TERMS",
    "CITATION",
    "GTHGMN",
    "GTHGMNConfig",
    "LINK_READINGS",
    "PROTOCOLS",
    "PairSets",
    "RECON_BASELINES",
    "REFINE_TERMS",
    "ReconBaseline",
    "baseline_phrase",
    "baseline_sentence",
    "compare_to_baselines",
    "edge_labels",
    "link_ceiling",
]
