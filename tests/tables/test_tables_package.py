"""The tables package's seams: lazy exports, the shared Arrow -> text path, the group
accumulator, the segments writer's columns and the public token-key function."""

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from fastbleu.errors import InputError


def test_paths_import_neither_numpy_nor_pyarrow():
    code = ("import sys, fastbleu.tables.paths as p; from fastbleu.tables import is_table_path; "
            "assert is_table_path('x.parquet') and not is_table_path('x.txt'); "
            "print(sorted(m for m in ('numpy', 'pyarrow', 'numba') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_lazy_exports():
    import fastbleu
    import fastbleu.tables as tables
    from fastbleu.tables.job import TableJob
    from fastbleu.tables.scoring import score_table

    assert tables.TableJob is TableJob and tables.score_table is score_table
    assert fastbleu.score_table is score_table
    assert sorted(dir(tables)) == sorted(tables.__all__)
    for name in tables.__all__:
        assert getattr(tables, name) is not None
    with pytest.raises(AttributeError):
        tables.nothing_here


def test_finish_keys_equals_the_kernel_finaliser():
    from fastbleu._kernels.text.hashing import finish, finish_keys

    ids = np.array([0, 1, 2, 12345, 2**40], dtype=np.int64)
    expected = [int(finish(np.uint64(i + 1))) for i in ids.tolist()]
    assert finish_keys(ids).tolist() == expected
    assert finish_keys(ids).dtype == np.uint64


def test_arrow_strings_one_path_two_message_styles():
    from fastbleu.inputs.text import arrow_strings, is_string_type

    chunked = pa.chunked_array([pa.array(["a", None]), pa.array(["b"])])
    assert arrow_strings(chunked, "x").to_pylist() == ["a", None, "b"]
    assert arrow_strings(pa.array(["a", "a"]).dictionary_encode(), "x").to_pylist() == ["a", "a"]
    assert is_string_type(pa.string()) and not is_string_type(pa.int64())
    bad = pa.array([b"ok", b"\xff"], pa.binary()).cast(pa.string(), safe=False)
    with pytest.raises(ValueError, match=r"x\[1\] is not valid UTF-8"):
        arrow_strings(bad, "x")
    with pytest.raises(InputError, match=r"column 'x', row 11: not valid UTF-8"):
        arrow_strings(bad, "x", first_row=10)
    assert arrow_strings(bad, "x", first_row=10, errors="replace").to_pylist() == ["ok", "\ufffd"]
    with pytest.raises(TypeError, match="must hold strings"):
        arrow_strings(pa.array([1, 2]), "x")
    with pytest.raises(InputError, match="column 'x' holds int64, not strings"):
        arrow_strings(pa.array([1, 2]), "x", first_row=0)


def test_groups_add_merge_and_order():
    from fastbleu.tables.groups import Groups

    def batch(keys, values, rows, position):
        groups = Groups(2)
        codes = np.array(keys, dtype=np.int64)
        groups.add(codes, values, np.array(rows, dtype=np.int64), np.ones(len(keys), np.int64),
                   np.zeros(len(keys), np.int64), ["13a"], position)
        return groups

    first = batch([0, 1, 0], [("a",), ("b",)], [[1, 1], [2, 2], [3, 3]], (0, 0))
    second = batch([0, 1], [("c",), (float("nan"),)], [[5, 5], [7, 7]], (1, 3))
    third = batch([0], [(float("nan"),)], [[1, 0]], (2, 5))
    merged = Groups(2).merge(third).merge(second).merge(first)
    keys, totals, info = merged.ordered()
    assert [k[0] for k in keys[:3]] == ["a", "b", "c"] and np.isnan(keys[3][0])
    assert totals.tolist() == [[4, 4], [2, 2], [5, 5], [8, 7]]
    assert merged.rows == 6 and [g.tokenizer for g in info] == ["13a"] * 4


def test_segments_out_columns_come_from_the_formula(tmp_path):
    import pyarrow.parquet as pq

    from fastbleu import BLEU
    from fastbleu.tables import score_table

    table = pa.table({"hyp": ["a b c", "d e"], "ref": ["a b c", "d f"], "sys": ["x", "y"]})
    out = tmp_path / "s.parquet"
    score_table(table, group_by="sys", segments_out=str(out), max_ngram_order=2)
    formula = BLEU(max_ngram_order=2).formula
    written = pq.read_table(out)
    assert written.column_names == ["row", "sys", formula.sentence_column,
                                    *formula.statistics_names]
    assert written.column_names[2:] == ["sentence_bleu", "hyp_len", "ref_len", "match_1",
                                        "match_2", "total_1", "total_2"]
