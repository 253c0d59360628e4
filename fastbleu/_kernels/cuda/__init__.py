"""numba.cuda kernels of :mod:`fastbleu.gpu`: token ids -> statistics rows -> scores, on the GPU.

* :mod:`.loader` imports numba's CUDA target once, and turns a failure into
  one line that names the fix;
* :mod:`.tokens` turns token ids (padding, end of sequence, missing
  references) into the same 64-bit token hashes as the CPU path;
* :mod:`.counting` makes the statistics rows in one launch
  (:func:`~.counting.bleu_rows`), each segment counted as its size calls
  for (a group of 32 threads per short segment, several segments per block;
  the whole block with a shared-memory table for longer ones; a table in
  global memory for segments too long for shared memory);
* :mod:`.formula` scores rows (sacrebleu's BLEU, NLTK's sentence BLEU);
* :mod:`.reduce` sums columns and copies ids into one type;
* :mod:`.bootstrap` lays the systems' rows out for resampling and scores the resamples;
* :mod:`.resamples` draws numpy's own bootstrap indices (sacrebleu's) and sums the
  drawn rows as it draws them;
* :mod:`.randomization` makes numpy's PCG64 stream on the device, and approximate
  randomization's coins and sums from it;
* :mod:`.units` cuts text into chrF's units, :mod:`.pairwise` makes MBR matrices.

Importing any of them imports numba.cuda; :mod:`fastbleu.gpu` does so only
when it is handed a CUDA array.
"""
