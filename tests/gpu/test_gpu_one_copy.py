"""The device kernels run the CPU kernels' own scalar functions, not copies of them.

:func:`fastbleu._kernels.cuda.tokens.device_function` compiles an ``@njit``
function of the CPU kernels for the device (and every ``@njit`` function
it calls); these tests check that the device's unit reader, n-gram keys and
formulas are those functions' code, so that a change to the CPU's logic is
a change to the GPU's too, and that a host function calling others runs on
the device with its callees compiled alongside.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import host, skip_without_device
from numba import njit

def _code(function):
    """The Python code a numba dispatcher (or the simulator's kernel object) compiles."""
    return (getattr(function, "py_func", None) or function.fn).__code__


def _shared():
    from fastbleu._kernels.bleu import formula as bleu_formula
    from fastbleu._kernels.bleu import nltk_formula
    from fastbleu._kernels.chrf import formula as chrf_formula
    from fastbleu._kernels.chrf import statistics as chrf_statistics
    from fastbleu._kernels.cuda import formula, pairwise, tokens, units
    from fastbleu._kernels.cuda import tokenize as device_tokenize
    from fastbleu._kernels.text import hashing, tokenize, tokenize_13a, tokenize_unicode

    return [
        (tokens.finish, hashing.finish), (tokens.fnv_step, hashing.fnv_step),
        (tokens.extend_key, hashing.extend_key),
        (tokens.utf8_length, tokenize_unicode.utf8_length),
        (units.read_units, chrf_statistics.read_units),
        (device_tokenize.split_tokens, tokenize_13a.split_tokens),
        (device_tokenize.preprocess_13a, tokenize_13a.preprocess_13a),
        (device_tokenize.tokens_char, tokenize.tokens_char),
        (device_tokenize.rstrip_end, tokenize_unicode.rstrip_end),
        (pairwise.f_score_order, chrf_formula.f_score_order),
        (pairwise.f_score_total, chrf_formula.f_score_total),
        (formula.bleu_from_row, bleu_formula.bleu_from_row),
        (formula.fsum, nltk_formula.fsum),
    ]


@skip_without_device
def test_device_functions_are_the_cpu_kernels_code():
    for device, cpu in _shared():
        assert _code(device) is _code(cpu), cpu.__name__


@skip_without_device
def test_a_cpu_function_and_its_callees_compiled_for_the_device():
    from fastbleu._kernels.cuda.loader import cuda
    from fastbleu._kernels.cuda.tokens import device_function

    @njit
    def twice(values, i):
        return 2 * values[i]

    @njit
    def doubled_sum(values, n):
        total = 0
        for i in range(n):
            total += twice(values, i)
        return total

    on_device = device_function(doubled_sum)
    assert device_function(doubled_sum) is on_device  # made once

    @cuda.jit
    def kernel(values, out):
        out[0] = on_device(values, values.shape[0])

    values = cuda.to_device(np.arange(5, dtype=np.int64))
    out = cuda.to_device(np.zeros(1, dtype=np.int64))
    kernel[1, 1](values, out)
    assert host(out)[0] == doubled_sum(np.arange(5, dtype=np.int64), 5) == 20


@pytest.mark.parametrize("eps_smoothing", [False, True])
def test_chrf_score_an_order_at_a_time_equals_the_row_formula(eps_smoothing):
    # The pairwise kernel's F-score (no row: an order at a time) is f_score's, bit for bit.
    from fastbleu._kernels.chrf.formula import f_score, f_score_order, f_score_total

    rng = np.random.default_rng(3)
    for _ in range(200):
        orders = int(rng.integers(1, 9))
        row = rng.integers(0, 6, 3 * orders).astype(np.int64)
        row[2::3] = np.minimum(row[2::3], np.minimum(row[0::3], row[1::3]))
        sums = (0.0, 0, 0.0, 0.0)
        for g in range(orders):
            sums = f_score_order(row[3 * g], row[3 * g + 1], row[3 * g + 2], 4.0, 5.0,
                                 eps_smoothing, *sums)
        assert f_score_total(*sums, orders, 4.0, 5.0, eps_smoothing) == \
            f_score(row, 0, orders, 4.0, 5.0, eps_smoothing)
