"""The quick run's slice of a parametrized matrix (issue 28).

The README's test command runs ``-m "not slow"``; ``.ci/run`` then runs ``-m slow``.
A large differential matrix keeps a representative slice in the quick run (every
option set and every script family at least once) and marks the rest of its cases
slow, so CI still runs every case and no code path leaves the quick run.
"""

from __future__ import annotations

import pytest


def slow_unless(quick: bool, *values, id: str | None = None):
    """One case of a parametrized test: in the quick run if ``quick``, else marked slow."""
    return pytest.param(*values, id=id, marks=() if quick else pytest.mark.slow)


def slow(*values):
    """One case of a parametrized test that runs with ``-m slow`` only (its id as without)."""
    return pytest.param(*values, marks=pytest.mark.slow)


def quick_and_full(property_at, quick: int, full: int):
    """A hypothesis property at two sizes.  ``property_at(n)`` builds the test with ``n``
    examples; returns the quick run's test (``quick`` examples) and CI's, the same test
    with ``full`` examples marked slow."""
    return property_at(quick), pytest.mark.slow(property_at(full))
