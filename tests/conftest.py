"""Fixtures every test shares.  Helpers and data paths live in :mod:`testkit`
(this folder is on ``sys.path`` because this file is here), never in test modules."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(autouse=True)
def _quiet_loggers():
    """sacrebleu and fastbleu warn about sentence BLEU without effective order; keep logs clean."""
    for name in ("sacrebleu", "fastbleu"):
        logging.getLogger(name).setLevel(logging.ERROR)
    yield
