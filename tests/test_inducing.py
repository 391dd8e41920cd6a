"""The choice of inducing graphs as plain functions on a kernel matrix's diagonal and
columns (graphgram.gaussian_process._inducing), against brute-force NumPy and LAPACK."""

import numpy as np
import pytest
import scipy.linalg

from graphgram import LowRankGraphKernel, MarginalizedGraphKernel
from graphgram.gaussian_process._inducing import choose, kmeans_plus_plus, pivoted_cholesky, random_subset
from graphgram.microkernels import KroneckerDelta, TensorProduct


def gram(n, rank, seed):
    """A random positive semi-definite n×n matrix of the given rank."""
    F = np.random.RandomState(seed).standard_normal((n, rank))
    return F @ F.T


def columns(K):
    """column(p) of K, and the list of the columns asked for."""
    asked = []

    def column(p):
        asked.append(p)
        return K[:, p].copy()
    return column, asked


def schur_pivots(K, m):
    """Greedy pivoted Cholesky by explicit Schur complements of the full matrix."""
    S = K.astype(np.float64).copy()
    chosen = []
    for _ in range(m):
        p = int(np.argmax(np.diag(S)))
        chosen.append(p)
        S = S - np.outer(S[:, p], S[p, :]) / S[p, p]
    return chosen


def d2_sampling(K, m, rng):
    """k-means++ seeding with the squared kernel distances of all pairs."""
    d = np.diag(K)
    D = np.maximum(d[:, None] + d[None, :] - 2.0 * K, 0.0)
    n = len(K)
    chosen = [int(rng.randint(n))]
    while len(chosen) < m:
        dist = D[:, chosen].min(axis=1)
        dist[chosen] = 0.0
        chosen.append(int(rng.choice(n, p=dist / dist.sum())))
    return chosen


# --- pivoted Cholesky --------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("m", [1, 5, 12])
def test_pivoted_cholesky_picks_the_greedy_schur_pivots(seed, m):
    K = gram(30, 12, seed)
    column, asked = columns(K)
    got = pivoted_cholesky(np.diag(K).copy(), column, m)
    assert got.tolist() == schur_pivots(K, m)
    assert asked == got.tolist()                       # one column per pivot, nothing more


def test_pivoted_cholesky_agrees_with_lapack_pstrf():
    K = gram(25, 25, 3) + 1e-3 * np.eye(25)
    _, piv, rank, info = scipy.linalg.lapack.dpstrf(K, lower=1)
    assert info == 0 and rank == 25
    got = pivoted_cholesky(np.diag(K).copy(), columns(K)[0], 25)
    np.testing.assert_array_equal(got, piv - 1)       # LAPACK counts from 1


def test_pivoted_cholesky_breaks_ties_by_the_first():
    column, _ = columns(np.eye(6))
    assert pivoted_cholesky(np.ones(6), column, 4).tolist() == [0, 1, 2, 3]


def test_pivoted_cholesky_refuses_more_pivots_than_the_rank():
    K = gram(20, 3, 4)
    with pytest.raises(ValueError, match="numerical rank 3 < inducing=4"):
        pivoted_cholesky(np.diag(K).copy(), columns(K)[0], 4)


# --- k-means++ ---------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 7, 11])
def test_kmeans_plus_plus_is_d2_sampling(seed):
    K = gram(40, 6, seed)
    column, asked = columns(K)
    got = kmeans_plus_plus(np.diag(K).copy(), column, 8, np.random.RandomState(seed))
    assert got.tolist() == d2_sampling(K, 8, np.random.RandomState(seed))
    assert len(set(got.tolist())) == 8 and got.min() >= 0 and got.max() < 40
    assert asked == got.tolist()


def test_kmeans_plus_plus_takes_a_generator_and_is_deterministic():
    K = gram(30, 8, 5)
    a = kmeans_plus_plus(np.diag(K).copy(), columns(K)[0], 6, np.random.default_rng(3))
    b = kmeans_plus_plus(np.diag(K).copy(), columns(K)[0], 6, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert len(set(a.tolist())) == 6 and 0 <= a.min() and a.max() < 30


def test_kmeans_plus_plus_picks_one_point_per_cluster_of_duplicates():
    centers = gram(4, 4, 6)                           # 4 distinct points (full rank)
    members = np.repeat(np.arange(4), 5)              # each 5 times
    K = centers[np.ix_(members, members)]
    for seed in range(5):
        got = kmeans_plus_plus(np.diag(K).copy(), columns(K)[0], 4, np.random.RandomState(seed))
        assert sorted(members[got].tolist()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="only 4 of the graphs are distinct"):
        kmeans_plus_plus(np.diag(K).copy(), columns(K)[0], 5, np.random.RandomState(0))


# --- random ------------------------------------------------------------------------

@pytest.mark.parametrize("n, m", [(10, 1), (10, 4), (10, 10)])
def test_random_subset_gives_sorted_distinct_indices(n, m):
    got = random_subset(n, m, np.random.RandomState(2))
    assert got.tolist() == sorted(set(got.tolist())) and len(got) == m and 0 <= got.min() and got.max() < n
    np.testing.assert_array_equal(got, np.sort(np.random.RandomState(2).choice(n, m, replace=False)))
    if m == n:
        np.testing.assert_array_equal(got, np.arange(n))


# --- with a graph kernel -------------------------------------------------------------

@pytest.mark.parametrize("method", ["kmeans++", "pivoted_cholesky", "random"])
@pytest.mark.parametrize("normalize", [False, True])
def test_choose_is_what_the_low_rank_kernel_chooses(mutag, method, normalize):
    graphs = mutag[0][:16]
    k = MarginalizedGraphKernel(TensorProduct(label=KroneckerDelta(0.5)), TensorProduct(label=KroneckerDelta(0.5)),
                                q=0.05, normalize=normalize, verbose=False)
    got = choose(k, graphs, 5, method, 4)
    expected = LowRankGraphKernel(k, inducing=5, method=method, random_state=4).fit(graphs).inducing_indices_
    np.testing.assert_array_equal(got, expected)
