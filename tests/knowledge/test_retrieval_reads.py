"""Rows of a memory-mapped index file read with pread equal the rows read through the mapping."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from knowledge.retrieval import reads


def test_it_reads_rows_of_a_mapped_matrix_and_of_views_of_it(tmp_path):
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((5_000, 24), dtype=np.float32)
    np.save(tmp_path / "m.npy", matrix)
    mapped = np.load(tmp_path / "m.npy", mmap_mode="r")
    assert reads._mapped_file(mapped) == (tmp_path / "m.npy", 128)
    # Scattered rows, runs of neighbours, a repeated row, the first and the last.
    rows = np.unique(np.concatenate([rng.choice(5_000, 200), np.arange(40, 90), [0, 4_999]]))
    np.testing.assert_array_equal(reads.take(mapped, rows), matrix[rows])
    np.testing.assert_array_equal(reads.take(mapped, np.array([3, 3, 9])), matrix[[3, 3, 9]])
    # A slice of the mapping, and the plain ndarray view scipy keeps of it.
    np.testing.assert_array_equal(
        reads.take(mapped[1_000:], rows[rows < 4_000]), matrix[1_000:][rows[rows < 4_000]]
    )
    assert reads._mapped_file(mapped[1_000:])[1] == 128 + 1_000 * 24 * 4
    data = np.load(tmp_path / "m.npy", mmap_mode="r").reshape(-1)
    csr = sparse.csr_matrix(
        (data, np.zeros(len(data), dtype=np.int32), np.arange(len(data) + 1)), shape=(len(data), 1)
    )
    assert not isinstance(csr.data, np.memmap) and reads._mapped_file(csr.data) is not None
    positions = np.sort(rng.choice(len(data), 300, replace=False))
    np.testing.assert_array_equal(reads.take(csr.data, positions), matrix.reshape(-1)[positions])


def test_an_array_in_memory_is_indexed_as_usual():
    matrix = np.arange(40, dtype=np.float64).reshape(10, 4)
    assert reads._mapped_file(matrix) is None
    np.testing.assert_array_equal(reads.take(matrix, np.array([1, 7])), matrix[[1, 7]])
    assert reads.take(matrix, np.zeros(0, dtype=np.int64)).shape == (0, 4)
