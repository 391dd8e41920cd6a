"""Samples made of several graphs: :class:`Mixture`, a weighted multiset of graphs, and
reactions, one mixture per role; their checks at the boundary and their layout over the
distinct graphs of a call.

A sample given to :class:`~graphgram.kernels.MixtureKernel` is one of

- a :class:`Mixture` (a solvent blend: its molecules and their mole fractions);
- a :class:`~graphgram.Graph`, the mixture of that graph alone with weight 1;
- a tuple of roles, each a :class:`Mixture`, a :class:`~graphgram.Graph` or
  ``None`` (the role is empty), the same number of roles in every sample of a
  call: a reaction is ``(reactants, reagents, products)``.

Everything here is plain data (a mixture holds its graphs and a read-only float64
array), so samples pickle and copy as graphs do. :func:`layout` turns a list of
samples into the distinct graphs it holds (the same object, or graphs with the same
content, counted once) and, per role, a sparse matrix of weights W (samples ×
distinct graphs): the mixture kernel is then W_X G W_Yᵀ for the Gram matrix G of
the distinct graphs.
"""

import hashlib

import numpy as np
import scipy.sparse as sp

from .graph import Graph

__all__ = ["Mixture", "as_sample_list", "components", "layout"]


def _readonly(a):
    a.flags.writeable = False
    return a


def _check_weights(weights, n, where):
    """The weights as a fresh read-only float64 array of n finite non-negative values,
    not all 0; errors start with ``where``."""
    if isinstance(weights, (str, bytes)) or np.isscalar(weights):
        raise TypeError("%s: weights must give one number per graph, got %r" % (where, weights))
    try:
        w = np.array(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("%s: weights must be numbers, got %r" % (where, weights)) from None
    if w.ndim != 1 or len(w) != n:
        raise ValueError("%s: %d graphs but %s weights; give one weight per graph"
                         % (where, n, len(w) if w.ndim == 1 else "shape %s of" % (w.shape,)))
    bad = ~np.isfinite(w)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError("%s: weights[%d] = %r is not finite" % (where, i, float(w[i])))
    bad = w < 0
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError("%s: weights[%d] = %r is negative; weights are amounts (mole fractions, counts)"
                         % (where, i, float(w[i])))
    if not (w > 0).any():
        raise ValueError("%s: every weight is 0; a mixture needs a positive weight" % where)
    return _readonly(w)


class Mixture:
    """A weighted multiset of graphs: a sample such as a solvent blend.

    The kernel between two mixtures A and B is
    K(A, B) = Σ_a Σ_b w_a w_b k(a, b) for a graph kernel k
    (:class:`~graphgram.kernels.MixtureKernel`), so a graph listed twice
    counts as once with the sum of its weights.

    Parameters
    ----------
    graphs : sequence of Graph
        At least one graph. Not copied (graphs are read-only); the same graph
        object may appear in many mixtures and is computed once per call.
    weights : array-like of float, shape (len(graphs),), default=None
        Finite, non-negative, at least one positive: mole or mass fractions,
        counts, concentrations (they need not sum to 1; the kernel's
        ``normalize`` removes their scale if asked). ``None``: all 1.

    Attributes
    ----------
    graphs : tuple of Graph
    weights : ndarray of float64, shape (n_components,), read-only
    n_components : int

    Raises
    ------
    TypeError, ValueError
        Naming the field: no graphs, something other than a graph, a number of
        weights other than the number of graphs, a NaN, infinite or negative
        weight, every weight 0.

    Examples
    --------
    >>> from graphgram import Mixture, molecules
    >>> water, ethanol = molecules.from_smiles("O"), molecules.from_smiles("CCO")
    >>> Mixture([water, ethanol], [0.7, 0.3])
    Mixture(2 graphs, weights=[0.7, 0.3])
    """

    __slots__ = ("_graphs", "_weights")

    def __init__(self, graphs, weights=None):
        where = "Mixture"
        if isinstance(graphs, Graph):
            raise TypeError("%s: graphs must be a list of graphs, not a single Graph; use [g]" % where)
        if isinstance(graphs, (str, bytes, dict)) or not hasattr(graphs, "__iter__"):
            raise TypeError("%s: graphs must be a list of graphgram.Graph, got %s" % (where, type(graphs).__name__))
        graphs = tuple(graphs)
        if not graphs:
            raise ValueError("%s: graphs is empty; a mixture holds at least one graph" % where)
        for i, g in enumerate(graphs):
            if not isinstance(g, Graph):
                raise TypeError("%s: graphs[%d] is not a graphgram.Graph (got %s)" % (where, i, type(g).__name__))
        self._graphs = graphs
        self._weights = (_readonly(np.ones(len(graphs))) if weights is None
                         else _check_weights(weights, len(graphs), where))

    @property
    def graphs(self):
        """tuple of Graph: the components."""
        return self._graphs

    @property
    def weights(self):
        """ndarray of float64, shape (n_components,): their weights (read-only)."""
        return self._weights

    @property
    def n_components(self):
        """int: the number of graphs listed."""
        return len(self._graphs)

    def __repr__(self):
        return "Mixture(%d graph%s, weights=%s)" % (len(self._graphs), "" if len(self._graphs) == 1 else "s",
                                                    np.round(self._weights, 6).tolist())

    def __getstate__(self):
        return self._graphs, np.asarray(self._weights)

    def __setstate__(self, state):
        graphs, weights = state
        self._graphs = tuple(graphs)
        self._weights = _readonly(np.array(weights, dtype=np.float64))

    def validate(self, where="Mixture"):
        """Check the stored graphs and weights again (the arrays are read-only, but
        NumPy lets a determined caller change that); errors start with ``where``.

        Returns
        -------
        self
        """
        if not isinstance(self._graphs, tuple) or not self._graphs:
            raise ValueError("%s: graphs is empty; a mixture holds at least one graph" % where)
        for i, g in enumerate(self._graphs):
            if not isinstance(g, Graph):
                raise TypeError("%s: graphs[%d] is not a graphgram.Graph (got %s)" % (where, i, type(g).__name__))
        _check_weights(self._weights, len(self._graphs), where)
        return self


def _roles(sample, where):
    """The sample as a tuple of roles, each a Mixture or None."""
    if isinstance(sample, (Mixture, Graph)):
        parts, tuple_form = (sample,), False
    elif isinstance(sample, (tuple, np.ndarray)) and not isinstance(sample, str):
        parts, tuple_form = tuple(sample), True
        if not parts:
            raise ValueError("%s is an empty tuple; a reaction has at least one role" % where)
    else:
        raise TypeError("%s is not a graphgram.Mixture, a Graph or a tuple of them, one per role (got %s)"
                        % (where, type(sample).__name__))
    roles = []
    for r, part in enumerate(parts):
        at = "%s[%d]" % (where, r) if tuple_form else where
        if part is None and tuple_form:
            roles.append(None)
        elif isinstance(part, Graph):
            roles.append(Mixture([part]))
        elif isinstance(part, Mixture):
            roles.append(part.validate(at))
        else:
            raise TypeError("%s is not a graphgram.Mixture, a Graph or None (got %s)" % (at, type(part).__name__))
    if all(m is None for m in roles):
        raise ValueError("%s has no graph: every role is None" % where)
    return tuple(roles)


def as_sample_list(X, name="X"):
    """Return X as a list of samples, each a tuple of roles (Mixture or None), or raise
    a clear error naming the sample and the field.

    Parameters
    ----------
    X : sequence of Mixture, Graph or tuple of them, or an object ndarray
        scikit-learn's Gaussian processes hand over a 1-D object array of
        samples, or a 2-D one (samples × roles) for tuples.
    name : str
        How error messages call the argument.

    Returns
    -------
    list of tuple of (Mixture or None)
        Every sample with the same number of roles; the graphs are validated.
    """
    if isinstance(X, (Mixture, Graph)):
        raise TypeError("%s must be a list of samples, not a single %s; use [x]" % (name, type(X).__name__))
    if isinstance(X, np.ndarray) and X.ndim == 2:
        X = [tuple(row) for row in X]
    if isinstance(X, (str, bytes, dict)) or not hasattr(X, "__len__") or not hasattr(X, "__iter__"):
        raise TypeError("%s must be a list of graphgram.Mixture (or Graph, or tuples of them), got %s"
                        % (name, type(X).__name__))
    samples = [_roles(s, "%s[%d]" % (name, i)) for i, s in enumerate(X)]
    if not samples:
        raise ValueError("%s is empty: at least one sample is needed" % name)
    for i, s in enumerate(samples):
        if len(s) != len(samples[0]):
            raise ValueError("%s[%d] has %d roles but %s[0] has %d; every sample of a call has the same roles"
                             % (name, i, len(s), name, len(samples[0])))
    _validate_graphs(samples, name)
    return samples


def components(samples, name):
    """(where, graphs) of every mixture of the samples, named as errors name them:
    ``X[3]`` for a mixture, ``X[3][1]`` for role 1 of a reaction."""
    for i, s in enumerate(samples):
        for r, m in enumerate(s):
            if m is not None:
                yield ("%s[%d]" % (name, i) if len(s) == 1 else "%s[%d][%d]" % (name, i, r)), m.graphs


def _validate_graphs(samples, name):
    """Graph.validate_all over every component (vectorized); on a failure each graph
    is checked alone, so that the error names the sample and the component."""
    graphs = {id(g): g for _, gs in components(samples, name) for g in gs}
    try:
        Graph.validate_all(list(graphs.values()), name)
    except (TypeError, ValueError):
        for where, gs in components(samples, name):
            for j, g in enumerate(gs):
                g.validate(j, where + ".graphs")
        raise


def _content(g):
    """A digest of everything a kernel reads of g: size, edges, weights, attributes."""
    h = hashlib.blake2b(digest_size=16)
    h.update(np.int64(g.n_nodes).tobytes())
    for a in (g.edges, g.weights):
        h.update(np.ascontiguousarray(a).tobytes())
    for kind, attrs in ((b"n", g.node_attrs), (b"e", g.edge_attrs)):
        for k in sorted(attrs):
            v = attrs[k]
            h.update(kind + k.encode() + b"\0" + v.dtype.str.encode() + repr(v.shape).encode())
            h.update(np.ascontiguousarray(v).tobytes())
    return h.digest()


def _same(a, b):
    """Whether graphs a and b hold the same content (the check behind a digest match)."""
    def same_attrs(x, y):
        return x.keys() == y.keys() and all(x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]) for k in x)
    return (a.n_nodes == b.n_nodes and np.array_equal(a.edges, b.edges) and np.array_equal(a.weights, b.weights)
            and same_attrs(a.node_attrs, b.node_attrs) and same_attrs(a.edge_attrs, b.edge_attrs))


class _Distinct:
    """The distinct graphs seen so far: one position per object, and per content
    (a digest, confirmed by comparing the arrays)."""

    def __init__(self, pool=None):
        self.graphs, self._by_id, self._by_content = [], {}, {}
        self.closed = pool is not None
        for p, g in enumerate(pool or ()):
            self.graphs.append(g)
            self._by_id.setdefault(id(g), p)
            self._by_content.setdefault(_content(g), []).append(p)

    def position(self, g):
        """g's position, a new one for a new graph; None when the pool is closed and lacks it."""
        p = self._by_id.get(id(g))
        if p is None:
            key = _content(g)
            for q in self._by_content.get(key, ()):
                if _same(self.graphs[q], g):
                    p = q
                    break
            else:
                if self.closed:
                    return None
                p = len(self.graphs)
                self.graphs.append(g)
                self._by_content.setdefault(key, []).append(p)
            self._by_id[id(g)] = p
        return p


def layout(*sample_lists, pool=None):
    """The distinct graphs of several validated sample lists and their weight matrices.

    Parameters
    ----------
    *sample_lists : list of tuple of (Mixture or None)
        From :func:`as_sample_list`, each with the same number of roles.
    pool : sequence of Graph, optional
        Positions into these graphs instead (a graph found by object or content;
        the pool is not extended): ``ValueError`` naming the first component
        that it lacks.

    Returns
    -------
    graphs : list of Graph
        The distinct graphs, in order of first appearance: the same object, or
        graphs with equal sizes, edges, weights and attributes, once (the pool's
        graphs with ``pool``).
    weights : list of list of scipy.sparse.csr_array
        For each sample list, one matrix per role of shape (samples, len(graphs)):
        W[i, p] is the weight of graph p in role r of sample i (summed if it is
        listed twice).
    """
    distinct = _Distinct(None if pool is None else list(pool))
    triplets = []
    for samples in sample_lists:
        per_role = []
        for r in range(len(samples[0])):
            rows, cols, vals = [], [], []
            for i, s in enumerate(samples):
                m = s[r]
                if m is None:
                    continue
                rows += [i] * m.n_components
                for j, g in enumerate(m.graphs):
                    p = distinct.position(g)
                    if p is None:
                        where = "samples[%d]" % i if len(s) == 1 else "samples[%d][%d]" % (i, r)
                        raise ValueError("%s.graphs[%d] is not in the pool of graphs" % (where, j))
                    cols.append(p)
                vals.append(m.weights)
            per_role.append((rows, cols, np.concatenate(vals) if vals else np.zeros(0), len(samples)))
        triplets.append(per_role)
    u = len(distinct.graphs)
    # The shape is known once every list has been seen (the distinct graphs of all).
    weights = [[_matrix(r, c, v, (n, u)) for r, c, v, n in per_role] for per_role in triplets]
    return distinct.graphs, weights


def _matrix(rows, cols, values, shape):
    """The CSR matrix of these entries, repeated ones summed, zero weights dropped."""
    W = sp.csr_array((values, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))), shape=shape)
    W.sum_duplicates()
    W.eliminate_zeros()
    return W
