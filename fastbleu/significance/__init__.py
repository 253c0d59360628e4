"""Significance of score differences (BLEU, chrF, any metric of the seam): bootstrap
confidence intervals, paired bootstrap resampling and paired approximate randomization,
with sacrebleu's draws.

Three tests, as sacrebleu 2.6 runs them:

* :func:`confidence_interval` -- the percentile bootstrap (Efron & Tibshirani,
  1993): resample the segments with replacement ``n_samples`` times, score
  each resample, report the mean and half the width of the central 95 %
  interval of those scores.
* :func:`paired_bootstrap` -- paired bootstrap resampling (Koehn, 2004): the
  same resamples for the baseline and every system; the p-value of a system
  is the share of resamples whose centred absolute score difference exceeds
  the observed one (with the +1 smoothing of Riezler & Maxwell's test).
* :func:`paired_ar` -- paired approximate randomization (Riezler & Maxwell,
  2005; Noreen, 1989): in each trial a coin decides, segment by segment,
  whether the baseline's and the system's outputs swap places; the p-value is
  the share of trials whose absolute score difference exceeds the observed
  one, again with +1 smoothing.

The draws are sacrebleu's, and the sums exact unless ``sacrebleu_compat``
asks for its float32 ones (:mod:`.resampling`).  The tests take
statistics and formulas (:func:`paired_tests`), or hypotheses and metrics
(:mod:`.systems`; ``BLEU()`` by default); several metrics share one
set of draws, as in sacrebleu's ``PairedTest``.

References
----------
Efron, B. & Tibshirani, R. (1993). *An Introduction to the Bootstrap.* Chapman & Hall.
Koehn, P. (2004). Statistical significance tests for machine translation evaluation. EMNLP.
Riezler, S. & Maxwell, J. T. (2005). On some pitfalls in automatic evaluation and
significance testing for MT. ACL Workshop on Intrinsic and Extrinsic Evaluation Measures.

The package, one idea a module::

    tests.py       the three tests and their results (this package's public names)
    systems.py     systems and metrics of a test -> statistics arrays
    resampling.py  seeds, sacrebleu's draws, the bootstrap and randomization engines
    estimates.py   sacrebleu's summaries of resampled scores (mean, interval, p-value)
"""

from .tests import *  # noqa: F401,F403  (the public names, as fastbleu.significance had them)
from .tests import __all__  # noqa: F401
