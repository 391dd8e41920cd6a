"""Which Gram blocks to compute for a set of needed graph pairs.

A GPyTorch call asks for entries K(i, j) of a pool of graphs in any pattern:
a training Gram (all pairs of one set), BoTorch's batched posteriors (each
candidate against the training graphs and itself), or a mixture. graphgram's
core computes rectangular blocks K(R, C) and symmetric ones K(S, S), one call
each; :func:`cover` turns a pattern into few such blocks. Plain NumPy, so that
it is tested on patterns alone.
"""

import numpy as np

__all__ = ["cover"]

# After this many grouped blocks the rest is computed as one bounding block:
# each block is a call into the core with its own fixed cost.
_MAX_GROUPS = 8


def cover(missing):
    """Return blocks (R, C) of positions whose products cover every True of ``missing``.

    The kernel is symmetric: a block (R, C) also yields (C, R), so ``missing``
    is read as the symmetric pattern ``missing | missing.T``. The diagonal is
    not covered (self-similarities are computed by ``diag``, cheaper than a
    pair). Rows that miss the same set of columns are grouped, largest group
    first, which turns BoTorch's pattern (each of b candidates against the same
    n training graphs) into one b×n block; a pattern with no such structure
    falls back to the block of all rows and columns that miss something when
    that costs at most twice the pairs missing, or after a few groups.

    Parameters
    ----------
    missing : ndarray of bool, shape (u, u)
        The pairs to compute.

    Returns
    -------
    blocks : list of (R, C)
        Sorted int arrays of positions; R == C (the same array) marks a
        symmetric block.
    """
    m = np.array(missing, dtype=bool, copy=True)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError("missing must be a square boolean matrix, got shape %s" % (m.shape,))
    m |= m.T
    np.fill_diagonal(m, False)
    blocks = []
    while m.any():
        rows = np.flatnonzero(m.any(axis=1))
        if len(blocks) >= _MAX_GROUPS or len(rows) ** 2 <= 2 * np.count_nonzero(m):
            # m is symmetric: its rows and columns that miss something are the same set.
            blocks.append((rows, rows))
            break
        patterns, inverse = np.unique(np.packbits(m[rows], axis=1), axis=0, return_inverse=True)
        inverse = np.ravel(inverse)
        counts = np.bincount(inverse)
        sizes = counts * np.unpackbits(patterns, axis=1, count=m.shape[1]).sum(axis=1)
        g = int(np.argmax(sizes))
        R = rows[inverse == g]
        C = np.flatnonzero(m[R[0]])  # never R itself: the diagonal is not missing
        blocks.append((R, C))
        m[np.ix_(R, C)] = False
        m[np.ix_(C, R)] = False
    return blocks
