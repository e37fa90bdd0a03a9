"""Network zoos with training trajectories, split by job.

- :mod:`~hgutils.weightspace.zoo.containers` -- :class:`MLPSpec`, :class:`CNNSpec` and :class:`Zoo`
  (``N`` networks x ``T`` snapshots as stacked tensors ``params[key] [N, T, ...]`` plus metadata);
- :mod:`~hgutils.weightspace.zoo.checkpoints` -- :meth:`Zoo.from_checkpoints`: a zoo from your own MLP
  checkpoints (``state_dict`` s or ``nn.Sequential`` s over training);
- :mod:`~hgutils.weightspace.zoo.cache` -- chunked, resumable generation and the zoo cache;
- :mod:`~hgutils.weightspace.zoo.siren` -- fitting many SIRENs at once (hand-written gradients);
- :mod:`~hgutils.weightspace.zoo.inr` -- one SIREN INR per image (DWSNets / NFN protocol);
- :mod:`~hgutils.weightspace.zoo.sine` -- SIRENs fitting ``a sin(b x)`` (DWSNets' self-supervised task);
- :mod:`~hgutils.weightspace.zoo.classifier` -- small classifiers with sampled hyperparameters, labelled
  by their test accuracy (Small CNN Zoo recipe, or MLPs).

Every generator has scale presets, is cached by config hash and resumes in chunks.
"""

from hgutils.weightspace.zoo.cache import cached_zoo, generate_chunked, net_seeds
from hgutils.weightspace.zoo.checkpoints import zoo_from_checkpoints
from hgutils.weightspace.zoo.classifier import (
    CNN_ZOO_EPOCHS,
    ClassifierZooConfig,
    classifier_forward,
    classifier_zoo,
)
from hgutils.weightspace.zoo.containers import CNNSpec, MLPSpec, Zoo
from hgutils.weightspace.zoo.inr import INRZooConfig, inr_image_zoo, inr_reconstruct
from hgutils.weightspace.zoo.sine import SineZooConfig, sine_targets, sine_zoo
from hgutils.weightspace.zoo.siren import auto_batch_size, fit_sirens, image_coordinates, psnr, siren_mse_value_and_grad

__all__ = [
    "CNN_ZOO_EPOCHS",
    "CNNSpec",
    "ClassifierZooConfig",
    "INRZooConfig",
    "MLPSpec",
    "SineZooConfig",
    "Zoo",
    "auto_batch_size",
    "cached_zoo",
    "classifier_forward",
    "classifier_zoo",
    "fit_sirens",
    "generate_chunked",
    "image_coordinates",
    "inr_image_zoo",
    "inr_reconstruct",
    "net_seeds",
    "psnr",
    "sine_targets",
    "sine_zoo",
    "siren_mse_value_and_grad",
    "zoo_from_checkpoints",
]
