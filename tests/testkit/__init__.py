"""Helpers the tests share: data paths and readers (:mod:`.data`), hypothesis strategies
and assertions on tokens and scores (:mod:`.text`), plain-Python reference statistics
(:mod:`.reference`).  Test modules import from here, never from each other."""
