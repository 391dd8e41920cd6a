"""Base kernels ("microkernels") comparing two nodes or two edges by their attributes.

Elementary kernels compare one attribute value (a scalar or a fixed-length
vector): :class:`KroneckerDelta`, :class:`SquareExponential`,
:class:`BrownianBridge`; :class:`Constant` ignores its arguments. They are bound
to named graph attributes by :class:`TensorProduct` (product over attributes) or
:class:`Additive` (sum over attributes)::

    from graphgram.microkernels import TensorProduct, KroneckerDelta, SquareExponential
    node_kernel = TensorProduct(label=KroneckerDelta(0.5), charge=SquareExponential(1.0))

Kernels combine with ``+`` and ``*`` (numbers become :class:`Constant`) and
``.normalized`` gives k(x, y) / sqrt(k(x, x) k(y, y)).

Hyperparameters follow scikit-learn's kernel conventions. Every elementary
kernel has exactly one hyperparameter (``c``, ``h``, ``length_scale``) with
bounds ``<name>_bounds``, a pair ``(low, high)`` or ``"fixed"``. A
hyperparameter's full name is its path through the expression joined by
``__``: the attribute name under :class:`TensorProduct`/:class:`Additive`,
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
        if index is not None:
            leaves = iter(self._leaves())

            def tag(node):
                if "terms" in node:
                    for t in node["terms"]:
                        tag(t)
                elif "kernel" in node:
                    tag(node["kernel"])
                else:
                    name, _ = next(leaves)
                    node["index"] = int(index[prefix + name])

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
            return {"kind": self._kind, self._param: val}
        if binding is None:
            raise _unbound_error(self, path)
        col, width, strings = binding
        if strings and not self._strings:
            raise TypeError("%s%s compares numbers, but its attribute holds strings"
                            % (type(self).__name__, " (at %s)" % path.rstrip("_") if path else ""))
        return self._leaf_spec(val, col, width, path)

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
            entry = layout[name]
            strings = len(entry) > 2 and entry[2] == "str"
            terms.append(k._spec(layout, (int(entry[0]), int(entry[1]), strings), path + name + "__"))
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


