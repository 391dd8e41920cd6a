"""Base kernels ("microkernels") comparing two nodes or two edges by their attributes.

Elementary kernels compare one attribute value (a scalar or a fixed-length
vector): :class:`KroneckerDelta`, :class:`SquareExponential`,
:class:`BrownianBridge`; :class:`Constant` ignores its arguments. They are bound
to named graph attributes by :class:`TensorProduct` (product over attributes) or
:class:`Additive` (sum over attributes)::

    from graphgram.microkernels import TensorProduct, KroneckerDelta, SquareExponential
    node_kernel = TensorProduct(label=KroneckerDelta(0.5), charge=SquareExponential(1.0))

Set- and vector-valued attributes: :class:`Convolution` compares multisets
stored as count vectors (the mean of an element kernel over all pairs),
:class:`DotProduct` and :class:`SquareExponential` (alias :class:`RBF`) compare
vectors. Discrete labels may also be compared by a user-given table
(:class:`LabelTable`) or Python function (:class:`LabelFunction`, tabulated
once per call over the labels that occur).

Kernels combine with ``+`` and ``*`` (numbers become :class:`Constant`) and
``.normalized`` gives k(x, y) / sqrt(k(x, x) k(y, y)).

Hyperparameters follow scikit-learn's kernel conventions. Every elementary
kernel has exactly one hyperparameter (``c``, ``h``, ``length_scale``) with
bounds ``<name>_bounds``, a pair ``(low, high)`` or ``"fixed"``. A
hyperparameter's full name is its path through the expression joined by
``__`` (:class:`LabelTable` and :class:`LabelFunction` have none;
:class:`Convolution` has its element kernel's, under ``kernel``): the attribute name under :class:`TensorProduct`/:class:`Additive`,
``k1``/``k2`` under ``+`` and ``*`` (:class:`Sum`, :class:`Product`) and
``kernel`` under :class:`Normalized`, e.g. ``label__h`` or
``k1__charge__length_scale``. The same names work with ``set_params``, so that a
graph kernel's ``node_kernel__label__h`` can be searched by ``GridSearchCV``.
``hyperparameters`` lists them in depth-first order of the leaves; ``theta``
holds the logarithms of the non-fixed ones. This list is the one declaration of
a base kernel's hyperparameters: the JSON expression that
:meth:`MicroKernel.to_spec` writes for the Go core tags each leaf with the
gradient column its name is given, so Go writes every derivative where Python
expects it, without the two agreeing on an order by convention.
"""

import copy
import math
import numbers
from collections.abc import Mapping

import numpy as np
from sklearn.gaussian_process.kernels import Hyperparameter

__all__ = [
    "MicroKernel",
    "Constant",
    "KroneckerDelta",
    "SquareExponential",
    "BrownianBridge",
    "DotProduct",
    "RBF",
    "Convolution",
    "LabelTable",
    "LabelFunction",
    "TensorProduct",
    "Additive",
    "Sum",
    "Product",
    "Normalized",
]


def _is_fixed(bounds):
    return isinstance(bounds, str) and bounds == "fixed"


def _as_kernel(k, op):
    if isinstance(k, MicroKernel):
        return k
    if isinstance(k, numbers.Real) and not isinstance(k, bool):
        return Constant(float(k))
    raise TypeError("unsupported operand for %s: a microkernel and %s" % (op, type(k).__name__))


def _unbound_error(kernel, path):
    where = " (at %s)" % path.rstrip("_") if path else ""
    return ValueError(
        "%r reads an attribute value but is not bound to an attribute%s; wrap it in "
        "TensorProduct or Additive, e.g. TensorProduct(label=%r)" % (kernel, where, kernel))


# The key under which an elementary kernel's expression carries its
# hyperparameter's name until MicroKernel.to_spec replaces it by "index".
_HP_NAME = "_hyperparameter"


class MicroKernel:
    """Base class of all base kernels.

    Subclasses are elementary kernels (one hyperparameter, no children) or
    composites (children, no hyperparameter of their own).
    """

    # --- structure (overridden) ---------------------------------------------------
    def _children(self):
        """List of (parameter name, child kernel)."""
        return []

    def _leaves(self, prefix=""):
        """Yield (full hyperparameter name, elementary kernel) depth-first."""
        for key, child in self._children():
            yield from child._leaves(prefix + key + "__")

    def _attr_order(self):
        """Attribute names read, in order of first appearance (depth-first)."""
        seen = {}
        for _, child in self._children():
            for a in child._attr_order():
                seen.setdefault(a, None)
        return list(seen)

    def _has_binding(self):
        return any(child._has_binding() for _, child in self._children())

    # --- scikit-learn style parameters -------------------------------------------
    def get_params(self, deep=True):
        """Get the parameters of this kernel.

        Parameters
        ----------
        deep : bool, default=True
            Also return the parameters of sub-kernels, as ``<child>__<name>``.

        Returns
        -------
        dict
        """
        params = dict(self._own_params())
        if deep:
            for key, child in self._children():
                for k, v in child.get_params(deep=True).items():
                    params[key + "__" + k] = v
        return params

    def set_params(self, **params):
        """Set parameters, nested ones as ``<child>__<name>`` (e.g. ``label__h``).

        Returns
        -------
        self
        """
        if not params:
            return self
        valid = self.get_params(deep=False)
        nested = {}
        for key, value in params.items():
            head, sep, rest = key.partition("__")
            if head not in valid:
                raise ValueError(
                    "invalid parameter %r for kernel %r; valid parameters are: %s"
                    % (head, self, ", ".join(sorted(self.get_params(deep=True)))))
            if sep:
                nested.setdefault(head, {})[rest] = value
            else:
                self._set_own(head, value)
                valid[head] = value
        for head, sub in nested.items():
            valid[head].set_params(**sub)
        return self

    def _own_params(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def _set_own(self, name, value):
        setattr(self, name, value)

    def clone(self):
        """Return a deep copy of this kernel."""
        return copy.deepcopy(self)

    # --- hyperparameters ------------------------------------------------------------
    @property
    def hyperparameters(self):
        """list of Hyperparameter: every hyperparameter, fixed ones included, in leaf order."""
        return [Hyperparameter(name, "numeric", leaf._bounds()) for name, leaf in self._leaves()]

    @property
    def n_dims(self):
        """int: the number of non-fixed hyperparameters (the length of ``theta``)."""
        return sum(not _is_fixed(leaf._bounds()) for _, leaf in self._leaves())

    @property
    def theta(self):
        """ndarray: log of the non-fixed hyperparameters, in leaf order."""
        vals = [leaf._hp() for _, leaf in self._leaves() if not _is_fixed(leaf._bounds())]
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(vals, dtype=np.float64))

    @theta.setter
    def theta(self, theta):
        theta = np.asarray(theta, dtype=np.float64).ravel()
        free = [leaf for _, leaf in self._leaves() if not _is_fixed(leaf._bounds())]
        if theta.shape[0] != len(free):
            raise ValueError("theta has %d values but the kernel has %d non-fixed hyperparameters"
                             % (theta.shape[0], len(free)))
        for leaf, t in zip(free, theta):
            leaf._set_hp(float(np.exp(t)))

    @property
    def bounds(self):
        """ndarray of shape (n_dims, 2): log of the bounds of the non-fixed hyperparameters."""
        rows = [np.asarray(leaf._bounds(), dtype=np.float64).ravel()
                for _, leaf in self._leaves() if not _is_fixed(leaf._bounds())]
        if not rows:
            return np.empty((0, 2))
        with np.errstate(divide="ignore"):
            return np.log(np.vstack(rows))

    def clone_with_theta(self, theta):
        """Return a copy of this kernel with the non-fixed hyperparameters set to ``exp(theta)``.

        Parameters
        ----------
        theta : array-like of shape (n_dims,)

        Returns
        -------
        MicroKernel
        """
        k = self.clone()
        k.theta = theta
        return k

    def hyperparameter_values(self):
        """Return the raw values of all hyperparameters (fixed included) in leaf order.

        Returns
        -------
        ndarray of float64
        """
        return np.array([leaf._hp() for _, leaf in self._leaves()], dtype=np.float64)

    # --- attributes and JSON ----------------------------------------------------------
    def attributes(self):
        """Return the set of attribute names this kernel reads.

        Returns
        -------
        set of str
        """
        return set(self._attr_order())

    def to_spec(self, layout, index=None, prefix=""):
        """Return the JSON-able expression of this kernel for the Go core (docs/abi.md).

        Parameters
        ----------
        layout : mapping of str to tuple
            Attribute name → (first column, width) in the packed feature matrix,
            or (first column, width, "str") for string labels coded per call.
        index : mapping of str to int, optional
            Full hyperparameter name (``prefix`` + the name in ``hyperparameters``)
            → gradient column; each leaf's expression then carries its column as
            ``"index"``.
        prefix : str, default=""
            Prefix of the hyperparameter names in ``index`` (``"node_kernel__"``).

        Returns
        -------
        dict
        """
        spec = self._spec(layout, None, "")

        def tag(node):
            # Each elementary kernel's expression names its hyperparameter.
            if isinstance(node, list):
                for t in node:
                    tag(t)
            elif isinstance(node, dict):
                name = node.pop(_HP_NAME, None)
                if name is not None and index is not None:
                    node["index"] = int(index[prefix + name])
                for t in node.values():
                    tag(t)

        tag(spec)
        return spec

    def _spec(self, layout, binding, path):  # pragma: no cover - overridden
        raise NotImplementedError

    # --- evaluation -------------------------------------------------------------------
    def __call__(self, x, y):
        """Evaluate the kernel on two nodes or two edges (in the Go core, as in a graph kernel).

        Parameters
        ----------
        x, y : dict
            Attribute name → value (scalar, string label or vector). For a kernel
            not bound to attributes, plain values may be given instead, e.g.
            ``KroneckerDelta(0.5)(1, 2)``.

        Returns
        -------
        float
        """
        return self.gradient(x, y)[0]

    def gradient(self, x, y):
        """Return the kernel value and its gradient with respect to the raw hyperparameters.

        Parameters
        ----------
        x, y : dict or values
            As in :meth:`__call__`.

        Returns
        -------
        value : float
        grad : ndarray of float64, shape (len(hyperparameters),)
            Derivatives with respect to the hyperparameter values (not their logs),
            in the order of ``hyperparameters``, fixed ones included.
        """
        from ._backend import evaluate_base_kernel

        graph = isinstance(x, Mapping)
        if graph != isinstance(y, Mapping):
            raise TypeError("x and y must both be dicts of attribute values, or both plain values")
        if graph:
            kernel, prefix = self, ""  # an unbound kernel that reads values fails in to_spec
        else:
            if self._has_binding():
                raise TypeError("%r compares attributes by name: call it with two dicts attribute -> value" % self)
            # A kernel on plain values reads them as one attribute.
            kernel, prefix, x, y = TensorProduct(value=self), "value__", {"value": x}, {"value": y}
        index = {prefix + h.name: k for k, h in enumerate(self.hyperparameters)}
        return evaluate_base_kernel(kernel, x, y, index, repr(self))

    # --- algebra ------------------------------------------------------------------------
    def __add__(self, other):
        return Sum(self, _as_kernel(other, "+"))

    def __radd__(self, other):
        return Sum(_as_kernel(other, "+"), self)

    def __mul__(self, other):
        return Product(self, _as_kernel(other, "*"))

    def __rmul__(self, other):
        return Product(_as_kernel(other, "*"), self)

    @property
    def normalized(self):
        """Normalized: this kernel divided by sqrt(k(x, x) k(y, y))."""
        return Normalized(self)

    _precedence = 3

    def _repr_in(self, precedence):
        r = repr(self)
        return "(%s)" % r if self._precedence < precedence else r


# --------------------------------------------------------------------------
# Elementary kernels
# --------------------------------------------------------------------------


class _Elementary(MicroKernel):
    """An elementary kernel: one hyperparameter named ``_param``."""

    _param = None
    _kind = None
    _default_bounds = (1e-5, 1e5)
    _reads = True  # reads an attribute value

    def _hp(self):
        """The raw hyperparameter value."""
        return getattr(self, self._param)

    def _bounds(self):
        return getattr(self, self._param + "_bounds")

    def _set_hp(self, v):
        setattr(self, self._param, v)

    def _own_params(self):
        return {self._param: getattr(self, self._param), self._param + "_bounds": self._bounds()}

    def _leaves(self, prefix=""):
        yield prefix + self._param, self

    def _attr_order(self):
        return []

    def _has_binding(self):
        return False

    def __repr__(self):
        v = getattr(self, self._param)
        s = "%s(%s=%r" % (type(self).__name__, self._param, float(v) if isinstance(v, numbers.Real) else v)
        b = self._bounds()
        if _is_fixed(b) or np.shape(b) != (2,) or tuple(float(t) for t in b) != self._default_bounds:
            s += ", %s_bounds=%r" % (self._param, b)
        return s + ")"

    def _checked(self, path):
        """The hyperparameter value as float, checked like the Go core does."""
        v = getattr(self, self._param)
        name = path + self._param
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise TypeError("%s: %s must be a number, got %r" % (type(self).__name__, name, v))
        v = float(v)
        if not math.isfinite(v) or v < 0 or (self._positive and v <= 0):
            raise ValueError("%s: %s = %r is out of range (must be %s)"
                             % (type(self).__name__, name, v, "> 0" if self._positive else ">= 0"))
        return v

    _positive = False
    _strings = False  # whether the kernel may compare string labels (coded per call)

    def _spec(self, layout, binding, path):
        val = self._checked(path)
        if not self._reads:
            spec = {"kind": self._kind, self._param: val}
        elif binding is None:
            raise _unbound_error(self, path)
        else:
            col, width, strings = binding[:3]
            if strings and not self._strings:
                raise TypeError("%s%s compares numbers, but its attribute holds strings"
                                % (type(self).__name__, " (at %s)" % path.rstrip("_") if path else ""))
            spec = self._leaf_spec(val, col, width, path)
        # The hyperparameter's full name, for to_spec to turn into its gradient column.
        spec[_HP_NAME] = path + self._param
        return spec

    def _leaf_spec(self, val, col, width, path):
        return {"kind": self._kind, self._param: val, "col": col, "width": width}


class Constant(_Elementary):
    """The constant kernel k(x, y) = c, reading no attribute.

    Parameters
    ----------
    c : float, default=1.0
        The value, >= 0.
    c_bounds : pair of float or "fixed", default=(1e-5, 1e5)
        Bounds of ``c`` for hyperparameter optimization.
    """

    _param = "c"
    _kind = "constant"
    _reads = False

    def __init__(self, c=1.0, c_bounds=(1e-5, 1e5)):
        self.c = c
        self.c_bounds = c_bounds

    _precedence = 4


class KroneckerDelta(_Elementary):
    """k(x, y) = 1 if x == y (all components of a vector) else h.

    Parameters
    ----------
    h : float
        Value for unequal arguments, >= 0 (in [0, 1] for a positive semi-definite kernel).
    h_bounds : pair of float or "fixed", default=(1e-3, 1.0)
        Bounds of ``h`` for hyperparameter optimization.
    """

    _param = "h"
    _kind = "kronecker_delta"
    _default_bounds = (1e-3, 1.0)
    _strings = True  # string labels compare by equality

    def __init__(self, h, h_bounds=(1e-3, 1.0)):
        self.h = h
        self.h_bounds = h_bounds


class SquareExponential(_Elementary):
    """k(x, y) = exp(-‖x − y‖² / (2 l²)) for scalars or fixed-length vectors.

    Parameters
    ----------
    length_scale : float
        l > 0.
    length_scale_bounds : pair of float or "fixed", default=(1e-5, 1e5)
        Bounds of ``length_scale`` for hyperparameter optimization.
    """

    _param = "length_scale"
    _kind = "square_exponential"
    _positive = True

    def __init__(self, length_scale, length_scale_bounds=(1e-5, 1e5)):
        self.length_scale = length_scale
        self.length_scale_bounds = length_scale_bounds


class BrownianBridge(_Elementary):
    """k(x, y) = max(0, c − |x − y|) for scalars.

    Parameters
    ----------
    c : float
        c > 0.
    c_bounds : pair of float or "fixed", default=(1e-5, 1e5)
        Bounds of ``c`` for hyperparameter optimization.
    """

    _param = "c"
    _kind = "brownian_bridge"
    _positive = True

    def __init__(self, c, c_bounds=(1e-5, 1e5)):
        self.c = c
        self.c_bounds = c_bounds

    def _leaf_spec(self, val, col, width, path):
        if width != 1:
            raise ValueError("BrownianBridge%s compares scalars, but its attribute has width %d"
                             % (" (at %s)" % path.rstrip("_") if path else "", width))
        return {"kind": self._kind, "c": val, "col": col}


class DotProduct(_Elementary):
    """k(x, y) = σ0² + x · y for scalars or fixed-length vectors (scikit-learn's DotProduct).

    Use ``DotProduct(...).normalized`` for the cosine similarity of two vectors.

    Parameters
    ----------
    sigma_0 : float, default=1.0
        σ0 >= 0, the inhomogeneity.
    sigma_0_bounds : pair of float or "fixed", default=(1e-5, 1e5)
    """

    _param = "sigma_0"
    _kind = "dot_product"

    def __init__(self, sigma_0=1.0, sigma_0_bounds=(1e-5, 1e5)):
        self.sigma_0 = sigma_0
        self.sigma_0_bounds = sigma_0_bounds


#: The radial basis function kernel on scalars and vectors: another name of :class:`SquareExponential`.
RBF = SquareExponential


def _check_psd(matrix, what):
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise ValueError("%s: the table must be a non-empty square matrix, got shape %s" % (what, m.shape))
    if not np.all(np.isfinite(m)):
        raise ValueError("%s: the table contains NaN or infinity" % what)
    if not np.allclose(m, m.T, rtol=0, atol=1e-12):
        raise ValueError("%s: the table is not symmetric" % what)
    m = (m + m.T) / 2
    low = float(np.linalg.eigvalsh(m).min())
    if low < -1e-9 * max(1.0, float(np.abs(m).max())):
        raise ValueError("%s: the table is not positive semi-definite (smallest eigenvalue %.3g); a "
                         "graph kernel built on it would not be a kernel" % (what, low))
    return m


class _Tabulated(MicroKernel):
    """A kernel given by a table over discrete labels, without hyperparameters."""

    def _leaves(self, prefix=""):
        return iter(())

    def _attr_order(self):
        return []

    def _has_binding(self):
        return False

    def _table(self, vocab, strings, path):  # pragma: no cover - overridden
        """(labels as the feature matrix codes them, matrix)."""
        raise NotImplementedError

    def _spec(self, layout, binding, path):
        if binding is None:
            raise _unbound_error(self, path)
        col, width, strings = binding[:3]
        vocab = binding[3] if len(binding) > 3 else None
        if callable(vocab):
            vocab = vocab()  # numeric attributes' values are computed on demand
        if width != 1:
            raise ValueError("%s%s compares single labels, but its attribute has width %d"
                             % (type(self).__name__, " (at %s)" % path.rstrip("_") if path else "", width))
        labels, matrix = self._table(vocab, strings, path)
        if not labels:
            # No label of the table occurs in this call: a one-label table of a code
            # no value has; every label then compares by equality.
            labels, matrix = [float(len(vocab or []))], np.ones((1, 1))
        return {"kind": "table", "col": col, "labels": [float(v) for v in labels],
                "matrix": np.asarray(matrix, dtype=np.float64).tolist()}


class LabelTable(_Tabulated):
    """A base kernel given as a table over discrete labels: k(a, b) = table[a, b].

    The table must be symmetric positive semi-definite (checked). Two labels
    that are not both in the table compare as 1 if equal and 0 otherwise. The
    kernel has no hyperparameters and combines with the others (``*``, ``+``,
    ``.normalized``, inside :class:`Convolution`).

    Parameters
    ----------
    table : mapping or array-like
        A mapping ``{(a, b): value}`` (the symmetric entry is implied; a missing
        diagonal entry is 1, a missing off-diagonal entry 0), or a square matrix
        whose rows and columns are ``labels``.
    labels : sequence, optional
        The labels (strings or numbers) of the matrix rows, required with a matrix.

    Examples
    --------
    >>> LabelTable({("C", "N"): 0.5, ("C", "O"): 0.3, ("N", "O"): 0.4})  # doctest: +SKIP
    """

    def __init__(self, table, labels=None):
        self.table = table
        self.labels = labels
        self._labels, self._matrix = self._normalize(table, labels)

    @staticmethod
    def _normalize(table, labels):
        if isinstance(table, Mapping):
            if labels is not None:
                raise ValueError("LabelTable: give labels only with a matrix, not with a mapping")
            labs = []
            for key in table:
                if not (isinstance(key, tuple) and len(key) == 2):
                    raise ValueError("LabelTable: mapping keys must be pairs (a, b), got %r" % (key,))
                for lab in key:
                    if lab not in labs:
                        labs.append(lab)
            n = len(labs)
            m = np.eye(n)
            seen = {}
            for (a, b), v in table.items():
                i, j = labs.index(a), labs.index(b)
                if (j, i) in seen and seen[(j, i)] != v:
                    raise ValueError("LabelTable: (%r, %r) and (%r, %r) have different values" % (a, b, b, a))
                seen[(i, j)] = v
                m[i, j] = m[j, i] = float(v)
        else:
            if labels is None:
                raise ValueError("LabelTable: a matrix needs its labels")
            labs = list(labels)
            if len(set(labs)) != len(labs):
                raise ValueError("LabelTable: labels must be distinct")
            m = np.asarray(table, dtype=np.float64)
            if m.shape != (len(labs), len(labs)):
                raise ValueError("LabelTable: %d labels need a %d×%d matrix, got shape %s"
                                 % (len(labs), len(labs), len(labs), m.shape))
        kinds = {isinstance(v, (str, np.str_)) for v in labs}
        if len(kinds) > 1:
            raise ValueError("LabelTable: labels must be all strings or all numbers")
        return labs, _check_psd(m, "LabelTable")

    def _own_params(self):
        return {"table": self.table, "labels": self.labels}

    def _set_own(self, name, value):
        setattr(self, name, value)
        self._labels, self._matrix = self._normalize(self.table, self.labels)

    def __repr__(self):
        return "LabelTable(%r)" % (self.table,) if self.labels is None else \
            "LabelTable(%r, labels=%r)" % (self.table, self.labels)

    def _table(self, vocab, strings, path):
        str_labels = bool(self._labels) and isinstance(self._labels[0], (str, np.str_))
        if str_labels != strings:
            raise TypeError("LabelTable%s has %s labels, but its attribute holds %s"
                            % (" (at %s)" % path.rstrip("_") if path else "",
                               "string" if str_labels else "numeric", "strings" if strings else "numbers"))
        if not strings:
            return [float(v) for v in self._labels], self._matrix
        vocab = list(vocab or [])
        keep = [i for i, lab in enumerate(self._labels) if lab in vocab]
        codes = [float(vocab.index(self._labels[i])) for i in keep]
        return codes, self._matrix[np.ix_(keep, keep)]


class LabelFunction(_Tabulated):
    """A base kernel given by a Python function on two discrete labels.

    ``func(a, b)`` is tabulated once per call over the labels of the attribute
    that occur in that call (all graphs of X and Y), checked symmetric positive
    semi-definite, and passed to the Go core as a :class:`LabelTable`. Suits
    discrete attributes with few distinct values (elements, bond orders, hashes
    of small vocabularies); the table has one row per distinct value.

    Parameters
    ----------
    func : callable (a, b) -> float
        Called with labels as stored (strings, or numbers as float).
    """

    def __init__(self, func):
        if not callable(func):
            raise TypeError("LabelFunction needs a callable, got %s" % type(func).__name__)
        self.func = func

    def _own_params(self):
        return {"func": self.func}

    def __repr__(self):
        return "LabelFunction(%s)" % getattr(self.func, "__name__", repr(self.func))

    def _table(self, vocab, strings, path):
        if vocab is None:
            raise ValueError("LabelFunction%s needs the values of a scalar attribute"
                             % (" (at %s)" % path.rstrip("_") if path else ""))
        vocab = list(vocab)
        m = np.array([[float(self.func(a, b)) for b in vocab] for a in vocab]).reshape(len(vocab), len(vocab))
        if not vocab:
            return [], m
        m = _check_psd(m, repr(self))
        codes = [float(i) for i in range(len(vocab))] if strings else [float(v) for v in vocab]
        return codes, m


class Convolution(MicroKernel):
    """Convolution kernel on multisets: the mean of a base kernel over all pairs of elements.

    The attribute holds a multiset as a count vector over a vocabulary fixed by
    whoever built the graphs (e.g. :func:`graphgram.molecules.from_rdkit`'s
    ``neighbors``: counts of neighbouring elements; ``ring_sizes``: counts of the
    rings of each size an atom is in). Column i counts element i, whose value is
    ``values[i]`` (default i). For count vectors x, y::

        k(x, y) = Σᵢⱼ xᵢ yⱼ kernel(values[i], values[j]) / (Σᵢ xᵢ · Σⱼ yⱼ)

    and two empty multisets give 1, an empty and a non-empty one 0. Use
    ``Convolution(...).normalized`` for the normalized mean (the cosine of the
    sum kernel).

    Parameters
    ----------
    kernel : MicroKernel
        The kernel on element values (not bound to attributes), e.g.
        ``KroneckerDelta(0.3)`` or ``SquareExponential(1.0)``.
    values : sequence of float, optional
        The value of each column's element; default 0, 1, 2, ...
    """

    def __init__(self, kernel, values=None):
        if not isinstance(kernel, MicroKernel):
            raise TypeError("Convolution needs a microkernel, got %s" % type(kernel).__name__)
        if kernel._has_binding():
            raise ValueError("Convolution(%r): the element kernel must not contain TensorProduct or Additive" % kernel)
        self.kernel = kernel
        self.values = values

    def _children(self):
        return [("kernel", self.kernel)]

    def _own_params(self):
        return {"kernel": self.kernel, "values": self.values}

    def _set_own(self, name, value):
        if name == "kernel" and not isinstance(value, MicroKernel):
            raise TypeError("kernel needs a microkernel, got %s" % type(value).__name__)
        setattr(self, name, value)

    def __repr__(self):
        return "Convolution(%r%s)" % (self.kernel, "" if self.values is None else ", values=%r" % (self.values,))

    def _spec(self, layout, binding, path):
        where = " (at %s)" % path.rstrip("_") if path else ""
        if binding is None:
            raise _unbound_error(self, path)
        col, width, strings = binding[:3]
        if strings:
            raise TypeError("Convolution%s compares count vectors, but its attribute holds strings" % where)
        values = list(range(width)) if self.values is None else [float(v) for v in self.values]
        if len(values) != width:
            raise ValueError("Convolution%s has %d values but its attribute has width %d" % (where, len(values), width))
        if not all(math.isfinite(v) for v in values):
            raise ValueError("Convolution%s: values must be finite" % where)
        vocab = sorted(set(float(v) for v in values))
        inner = self.kernel._spec(layout, (0, 1, False, vocab), path + "kernel__")
        return {"kind": "convolution", "col": col, "width": width, "values": [float(v) for v in values],
                "kernel": inner}


# --------------------------------------------------------------------------
# Attribute bindings
# --------------------------------------------------------------------------


class _Binding(MicroKernel):
    """Combine elementary kernels, each bound to a named attribute."""

    _kind = None
    _word = None

    def __init__(self, /, **kernels):
        if not kernels:
            raise ValueError("%s needs at least one attribute=kernel argument" % type(self).__name__)
        for name, k in kernels.items():
            self._check_entry(name, k)
        self._kernels = dict(kernels)

    def _check_entry(self, name, k):
        cls = type(self).__name__
        if "__" in name:
            raise ValueError("%s: attribute name %r must not contain '__' (it separates nested "
                             "parameter names)" % (cls, name))
        if not isinstance(k, MicroKernel):
            raise TypeError("%s(%s=...) needs a microkernel, got %s" % (cls, name, type(k).__name__))
        if k._has_binding():
            raise ValueError("%s(%s=%r): the kernel bound to an attribute must not itself contain "
                             "TensorProduct or Additive" % (cls, name, k))

    def _children(self):
        return list(self._kernels.items())

    def _own_params(self):
        return dict(self._kernels)

    def _set_own(self, name, value):
        self._check_entry(name, value)
        self._kernels[name] = value

    def _has_binding(self):
        return True

    def _attr_order(self):
        return list(self._kernels)

    def __getattr__(self, name):
        # Expose bound kernels as attributes (k.label), like scikit-learn parameters.
        kernels = self.__dict__.get("_kernels")
        if kernels is not None and name in kernels:
            return kernels[name]
        raise AttributeError("%r object has no attribute %r" % (type(self).__name__, name))

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % kv for kv in self._kernels.items()))

    def _spec(self, layout, binding, path):
        if binding is not None:
            raise ValueError("%s cannot be nested inside another attribute binding" % type(self).__name__)
        terms = []
        for name, k in self._kernels.items():
            if name not in layout:
                raise ValueError("attribute %r is not in the packed layout (%s)"
                                 % (name, ", ".join(layout) or "no attributes"))
            # A layout entry is (column, width) or (column, width, "str") for string labels.
            # (column, width), (column, width, "str"|"num") or (column, width, "str"|"num", vocabulary).
            entry = layout[name]
            strings = len(entry) > 2 and entry[2] == "str"
            vocab = entry[3] if len(entry) > 3 else None
            terms.append(k._spec(layout, (int(entry[0]), int(entry[1]), strings, vocab), path + name + "__"))
        return {"kind": self._kind, "terms": terms}


class TensorProduct(_Binding):
    """Product of elementary kernels, each applied to a named attribute.

    ``TensorProduct(label=KroneckerDelta(0.5), charge=SquareExponential(1.0))(x, y)``
    is ``KroneckerDelta(0.5)(x["label"], y["label"]) * SquareExponential(1.0)(x["charge"], y["charge"])``.

    Parameters
    ----------
    **kernels : MicroKernel
        Attribute name → kernel on that attribute's values (an elementary kernel or
        a ``+``/``*``/``.normalized`` combination of them). Names must not contain ``__``.
    """

    _kind = "product"


class Additive(_Binding):
    """Sum of elementary kernels, each applied to a named attribute.

    Parameters
    ----------
    **kernels : MicroKernel
        Attribute name → kernel on that attribute's values. Names must not contain ``__``.
    """

    _kind = "sum"


# --------------------------------------------------------------------------
# Algebra
# --------------------------------------------------------------------------


class _Binary(MicroKernel):
    _kind = None
    _symbol = None

    def __init__(self, k1, k2):
        self.k1 = k1
        self.k2 = k2

    def _children(self):
        return [("k1", self.k1), ("k2", self.k2)]

    def _own_params(self):
        return {"k1": self.k1, "k2": self.k2}

    def _set_own(self, name, value):
        if not isinstance(value, MicroKernel):
            raise TypeError("%s needs a microkernel, got %s" % (name, type(value).__name__))
        setattr(self, name, value)

    def __repr__(self):
        return "%s %s %s" % (self.k1._repr_in(self._precedence), self._symbol,
                             self.k2._repr_in(self._precedence + 1))

    def _spec(self, layout, binding, path):
        return {"kind": self._kind, "terms": [self.k1._spec(layout, binding, path + "k1__"),
                                              self.k2._spec(layout, binding, path + "k2__")]}


class Sum(_Binary):
    """k1 + k2; usually written with ``+``.

    Parameters
    ----------
    k1, k2 : MicroKernel
    """

    _kind = "sum"
    _symbol = "+"
    _precedence = 1


class Product(_Binary):
    """k1 * k2; usually written with ``*``.

    Parameters
    ----------
    k1, k2 : MicroKernel
    """

    _kind = "product"
    _symbol = "*"
    _precedence = 2


class Normalized(MicroKernel):
    """k(x, y) / sqrt(k(x, x) k(y, y)), or 0 where a self-similarity is <= 0.

    Usually obtained as ``kernel.normalized``.

    Parameters
    ----------
    kernel : MicroKernel
    """

    def __init__(self, kernel):
        self.kernel = kernel

    def _children(self):
        return [("kernel", self.kernel)]

    def _own_params(self):
        return {"kernel": self.kernel}

    def _set_own(self, name, value):
        if not isinstance(value, MicroKernel):
            raise TypeError("kernel needs a microkernel, got %s" % type(value).__name__)
        self.kernel = value

    def __repr__(self):
        return "Normalized(%r)" % (self.kernel,)

    def _spec(self, layout, binding, path):
        return {"kind": "normalized", "kernel": self.kernel._spec(layout, binding, path + "kernel__")}


