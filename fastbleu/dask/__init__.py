"""fastbleu on a Dask cluster: the same numbers as one process, partition by partition.

Every metric's statistics (BLEU's, chrF's, TER's) are integer sums, so
scoring a partitioned table splits exactly: every partition becomes
per-group sums on a worker, the sums are added in a tree, and the client
turns them into scores with the same code as :func:`fastbleu.score_table`.
The result is identical, not approximately equal, and its groups come in
the same first-appearance order (each group carries the position of its
first row through the reduction).  NIST's information weights are
counted over a whole group's references, so with NIST the graph first
counts every partition's reference n-grams, adds the counts in a tree and
turns them into weights once, which every scoring task then uses
(:mod:`fastbleu.tables.prepass`).

    score_table          one corpus score per group and metric, as ``fastbleu.score_table``
    score_groups         the same as a :class:`~fastbleu.tables.results.GroupScores`
    sentence_scores      a sentence-score column added to a Dask DataFrame
    segment_statistics   every segment's statistics gathered to the client
    connect              a client for an existing scheduler or a new LocalCluster

Dask is optional (``pip install 'fastbleu[dask]'``) and imported only when
one of these functions runs; importing this module does not import it.
"""

from .cluster import connect, require
from .scoring import score_groups, score_table, segment_statistics, sentence_scores

__all__ = ["connect", "require", "score_groups", "score_table", "segment_statistics",
           "sentence_scores"]
