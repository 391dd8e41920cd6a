"""Gram matrices on Dask: independent blocks as tasks of a ``dask.distributed`` cluster.

:func:`gram` splits K(X, X) or K(X, Y) into blocks of rows × columns and runs
each block as a Dask task that calls the kernel exactly as a single process
would, on the same graphs, so that the assembled matrix is bit for bit the one
``kernel(X)`` or ``kernel(X, Y)`` returns:

- the symmetric case computes only the blocks on and above the diagonal; a
  diagonal block is ``kernel(X[b])`` (symmetric, upper triangle solved) and an
  off-diagonal block ``kernel(X[b], X[c])``, mirrored below the diagonal;
- with ``normalize=True`` the raw diagonals are computed once, by the diagonal
  blocks (symmetric case; the single-process call takes them from its own
  diagonal too) or by one ``diag`` task per block of graphs (K(X, Y)), and each
  block is normalized by the tasks that compute it.

The graphs are validated once in the calling process, pickled once per block of
graphs into a small task whose result every block task of that row or column
refers to by future: each worker receives a block of graphs once while it needs
it, and no block task carries graphs. The per-call preparation (Python packing,
and the Go core's per-graph preprocessing: reordering, ...) happens inside each
block's call, as in any call of the kernel, so it is redone per block.

One exception to bit-identity: the shortest-path kernel's pair-by-pair methods
(a node or length kernel that is not an exact match) are not bitwise symmetric
in their two graphs, and its symmetric call computes each pair with the graph of
larger shortest-path structure first, whereas a block K(X[b], X[c]) takes them in
row, column order: those entries agree with ``kernel(X)`` to about 1e-14
relative (single-process ``kernel(X, X)`` differs from ``kernel(X)`` the same
way). The feature-map method (exact-match kernels) is bit-identical.

Failures are Dask's to handle: when a worker is lost its running and held
blocks are recomputed elsewhere, by the same code on the same graphs, so the
result stays exact. Progress is Dask's (its dashboard, or
``distributed.progress`` on the futures); kernels' own progress bars are
switched off inside tasks.

Tasks call the kernel only through the internal API graphgram's modules share,
:class:`graphgram.kernels._base.GraphKernelInternals` (``_compute``,
``_raw_diag``, ``_check_params``).

Dask is imported only when this module's functions run: graphgram works
without it. Install with ``pip install graphgram[distributed]``.
"""

import copy
import math
import os
import pickle

import numpy as np

from ._memory import _available_memory
from .graph import as_graph_list, node_counts
from .kernels._base import GraphKernelInternals
from .kernels._normalize import cosine_normalize, normalize_exponent, normalize_symmetric

__all__ = ["gram", "choose_block_size"]

# Block-size heuristics (see choose_block_size).
_TASKS_PER_THREAD = 4          # at least this many block tasks per worker thread, for balance
_MIN_NODE_PAIRS = 1e6          # a block should cover at least this many node pairs, to amortize a task
_BLOCK_COPIES = 4              # raw block, normalized block, mirrored copy, serialized result
_MEMORY_FRACTION = 0.25        # of a worker thread's share of memory, for one block's copies


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise ImportError("graphgram.distributed needs Dask: pip install 'graphgram[distributed]' "
                          "(dask[distributed] and zarr)") from exc
    return distributed


# --------------------------------------------------------------------------
# Block size
# --------------------------------------------------------------------------


def _block_count(n, block_size):
    return -(-n // block_size)


def _n_tasks(n_rows, n_cols, block_size, symmetric):
    nr = _block_count(n_rows, block_size)
    return nr * (nr + 1) // 2 if symmetric else nr * _block_count(n_cols, block_size)


def choose_block_size(n_rows, n_cols, mean_nodes, n_threads, thread_memory, symmetric=True):
    """Return the number of graphs per block (rows and columns alike).

    The largest size that still gives every worker thread several tasks
    (``_TASKS_PER_THREAD``), but no smaller than a block worth a task (about
    ``_MIN_NODE_PAIRS`` node pairs, from the graphs' mean size), and never so
    large that a block's float64 values and their copies exceed a quarter of a
    thread's share of worker memory.

    Parameters
    ----------
    n_rows, n_cols : int
        Numbers of graphs in X and Y (n_cols = n_rows when symmetric).
    mean_nodes : float
        Mean number of nodes per graph.
    n_threads : int
        Worker threads of the cluster, all together.
    thread_memory : float or None
        Bytes of worker memory per thread (the smallest over the workers), None if unknown.
    symmetric : bool
        Whether only the blocks on and above the diagonal are computed.

    Returns
    -------
    int
    """
    largest = max(n_rows, n_cols)
    wanted = _TASKS_PER_THREAD * max(1, n_threads)
    by_parallelism = 1
    for n_blocks in range(1, largest + 1):  # the fewest even blocks that give enough tasks
        size = -(-largest // n_blocks)
        if _n_tasks(n_rows, n_cols, size, symmetric) >= wanted:
            by_parallelism = size
            break
    by_work = math.ceil(math.sqrt(_MIN_NODE_PAIRS) / max(mean_nodes, 1.0))
    size = max(by_parallelism, by_work)
    if thread_memory:
        by_memory = int(math.sqrt(thread_memory * _MEMORY_FRACTION / (8 * _BLOCK_COPIES)))
        size = min(size, max(1, by_memory))
    return int(min(max(size, 1), largest))


def _cluster_resources(client):
    """(worker threads in all, memory per thread of the smallest worker or None)."""
    workers = client.scheduler_info()["workers"].values()
    threads = sum(w.get("nthreads", 1) for w in workers)
    per_thread = [w["memory_limit"] / max(1, w.get("nthreads", 1)) for w in workers if w.get("memory_limit")]
    return threads, (min(per_thread) if per_thread else _available_memory())


# --------------------------------------------------------------------------
# Tasks (module level: workers import them by name)
# --------------------------------------------------------------------------


def _open_target(target):
    """The on-disk array a task writes into, opened in this process."""
    kind = target[0]
    if kind == "zarr":
        import zarr
        return zarr.open_array(store=target[1], mode="r+")
    _, filename, offset, shape = target
    return np.memmap(filename, dtype=np.float64, mode="r+", offset=offset, shape=shape)


def _write(target, row, col, K, mirror):
    """Write block K at (row, col) of the target, and K.T at (col, row) when mirrored."""
    array = _open_target(target)
    array[row:row + K.shape[0], col:col + K.shape[1]] = K
    if mirror:
        array[col:col + K.shape[1], row:row + K.shape[0]] = K.T
    if isinstance(array, np.memmap):
        array.flush()


def _block_task(kernel, rows, cols, diag_rows, diag_cols, target, row, col, mirror):
    """Compute one block; return (block or None when written to target, raw diagonal or None).

    ``cols=None`` is a diagonal block K(rows, rows), computed as the symmetric
    call; its raw diagonal is returned for the normalization of other blocks.
    """
    s = normalize_exponent(kernel.normalize)
    if cols is None:
        K = kernel._compute("gram", rows)[0]
        diag = np.diag(K).copy()
        if s:
            K = normalize_symmetric(K, diag, s)
    else:
        K = kernel._compute("gram", rows, cols)[0]
        diag = None
        if s:
            K = cosine_normalize(K, diag_rows, diag_cols, s)
    if target is not None:
        _write(target, row, col, K, mirror)
        K = None
    return K, diag


def _diag_task(kernel, graphs):
    """The raw self-similarities of a block of graphs (K(X, Y) normalized)."""
    return kernel._raw_diag(graphs)


def _graphs_task(pickled):
    """A block of graphs, from the bytes the client pickled them into."""
    return pickle.loads(pickled)


def _block_of(result):
    return result[0]


def _diag_of(result):
    return result[1]


# --------------------------------------------------------------------------
# The entry point
# --------------------------------------------------------------------------


def _target_for(out, shape, block_size):
    """Create the on-disk array ``out`` names; return (target description, array to return)."""
    if isinstance(out, np.memmap):
        if out.dtype != np.float64 or out.shape != shape or not out.flags.c_contiguous or out.filename is None:
            raise ValueError("out: a np.memmap must be a C-contiguous float64 file mapping of shape %s, got %s %s"
                             % (shape, out.dtype, out.shape))
        out.flush()
        return ("memmap", os.path.abspath(out.filename), int(out.offset), shape), out
    path = os.path.abspath(os.fspath(out))
    if path.endswith(".zarr"):
        import zarr
        zarr.open_array(store=path, mode="w", shape=shape, chunks=(block_size, block_size), dtype="f8")
        return ("zarr", path), None
    if path.endswith(".npy"):
        array = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=shape)
        target = ("memmap", path, int(array.offset), shape)
        del array
        return target, None
    raise ValueError("out must be None, 'dask', a path ending in .zarr or .npy, or a np.memmap; got %r" % (out,))


def gram(kernel, X, Y=None, client=None, block_size=None, out=None):
    """Compute K(X, X) or K(X, Y) of a graph kernel as blocks on a Dask cluster.

    The result is bit for bit ``kernel(X)`` or ``kernel(X, Y)`` of a single
    process (normalized or not), for every kernel of graphgram; the one
    exception, the shortest-path kernel's pair methods in the symmetric case
    (about 1e-14 relative), is described in the module's documentation.

    Parameters
    ----------
    kernel : GraphKernelBase
        MarginalizedGraphKernel, ShortestPathKernel, RandomWalkKernel or a
        subclass; graph-level values only (no ``nodal``, no gradient). Its
        ``n_jobs=None`` becomes 1 inside tasks (Dask's threads parallelize
        across blocks; set ``n_jobs`` to let each task use more Go threads),
        and its progress bar is off inside tasks.
    X : list of Graph
    Y : list of Graph, optional
        Without Y the symmetric K(X, X): only blocks on and above the diagonal are computed.
    client : distributed.Client, optional
        Defaults to the current client (``distributed.get_client()``).
    block_size : int, optional
        Graphs per block, rows and columns alike. By default
        :func:`choose_block_size` picks it from the graphs' sizes and the
        workers' threads and memory.
    out : None, "dask", str or os.PathLike or np.memmap
        Where the matrix goes:

        - ``None``: a NumPy array, assembled in this process as blocks arrive;
        - ``"dask"``: a ``dask.array.Array`` whose blocks are held in the
          workers' memory (computed now, as futures);
        - a path ending in ``.zarr``: a Zarr array, chunked by blocks, written
          by the workers (one writer per chunk) and returned opened read-only;
          the matrix is never in one process;
        - a path ending in ``.npy``, or a ``np.memmap`` of the right shape
          (float64, C order): written in place by the workers, which must see
          the same file system; the memmap is returned, opened read-only for a path.

    Returns
    -------
    ndarray, dask.array.Array, zarr.Array or np.memmap
    """
    distributed = _import_distributed()
    if client is None:
        client = distributed.get_client()
    if not isinstance(kernel, GraphKernelInternals) or kernel._kernel is None:
        raise TypeError("kernel must be a graphgram graph kernel, got %s" % type(kernel).__name__)
    kernel._check_params()
    X = as_graph_list(X, "X")
    symmetric = Y is None
    Y = X if symmetric else as_graph_list(Y, "Y")
    shape = (len(X), len(Y))
    if block_size is None:
        threads, memory = _cluster_resources(client)
        mean_nodes = np.mean(np.concatenate([node_counts(X)] + ([] if symmetric else [node_counts(Y)])))
        block_size = choose_block_size(shape[0], shape[1], mean_nodes, threads, memory, symmetric)
    elif not isinstance(block_size, (int, np.integer)) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError("block_size must be a positive integer, got %r" % (block_size,))
    block_size = int(block_size)

    task_kernel = copy.copy(kernel)  # shallow: only n_jobs and verbose change
    if getattr(task_kernel, "n_jobs", 0) is None:
        task_kernel.n_jobs = 1
    if hasattr(task_kernel, "verbose"):
        task_kernel.verbose = False  # Dask reports progress; a worker has no terminal

    to_dask = isinstance(out, str) and out == "dask"
    target, returned = (None, None) if out is None or to_dask else _target_for(out, shape, block_size)

    row_starts = list(range(0, shape[0], block_size))
    col_starts = row_starts if symmetric else list(range(0, shape[1], block_size))
    # Graphs travel once per block of graphs, as one pickled frame (Dask would otherwise send each graph's
    # arrays as frames of their own: thousands of small frames, several times the graphs' size in transit),
    # and reach each worker that needs them once. They are tasks, not scattered data, so that Dask can
    # recompute them when a worker holding the only copy is lost (the lineage of a block held on workers).
    submit = client.submit
    row_graphs = [submit(_graphs_task, pickle.dumps(X[r:r + block_size], protocol=pickle.HIGHEST_PROTOCOL),
                         pure=False) for r in row_starts]
    col_graphs = row_graphs if symmetric else [
        submit(_graphs_task, pickle.dumps(Y[c:c + block_size], protocol=pickle.HIGHEST_PROTOCOL), pure=False)
        for c in col_starts]
    blocks = {}   # (i, j) -> future of (block or None, diagonal or None)
    try:
        if symmetric:
            diag_rows = [None] * len(row_starts)
            for i, r in enumerate(row_starts):
                blocks[i, i] = submit(_block_task, task_kernel, row_graphs[i], None, None, None, target, r, r,
                                      False, pure=False)
                diag_rows[i] = submit(_diag_of, blocks[i, i], pure=False) if kernel.normalize else None
            diag_cols = diag_rows
        elif kernel.normalize:
            diag_rows = [submit(_diag_task, task_kernel, g, pure=False) for g in row_graphs]
            diag_cols = [submit(_diag_task, task_kernel, g, pure=False) for g in col_graphs]
        else:
            diag_rows, diag_cols = [None] * len(row_starts), [None] * len(col_starts)
        for i, r in enumerate(row_starts):
            for j, c in enumerate(col_starts):
                if symmetric and j <= i:
                    continue
                blocks[i, j] = submit(_block_task, task_kernel, row_graphs[i], col_graphs[j], diag_rows[i],
                                      diag_cols[j], target, r, c, symmetric, pure=False)
        if to_dask:
            return _as_dask_array(client, blocks, row_starts, col_starts, shape, symmetric)
        result = _collect(distributed, blocks, row_starts, col_starts, shape, symmetric, target is None)
    except BaseException:
        client.cancel(list(blocks.values()))
        raise
    if target is None:
        return result
    if returned is not None:
        return returned
    if target[0] == "zarr":
        import zarr
        return zarr.open_array(store=target[1], mode="r")
    return np.load(target[1], mmap_mode="r")


def _collect(distributed, blocks, row_starts, col_starts, shape, symmetric, assemble):
    """Wait for every block; place them into a NumPy array when ``assemble``."""
    K = np.empty(shape) if assemble else None
    where = {f.key: ij for ij, f in blocks.items()}
    for future in distributed.as_completed(list(blocks.values())):
        block = future.result()[0]
        i, j = where[future.key]
        future.release()
        if assemble:
            r, c = row_starts[i], col_starts[j]
            K[r:r + block.shape[0], c:c + block.shape[1]] = block
            if symmetric and i != j:
                K[c:c + block.shape[1], r:r + block.shape[0]] = block.T
    return K


def _as_dask_array(client, blocks, row_starts, col_starts, shape, symmetric):
    """A dask.array whose blocks are the futures' results (the lower triangle as transposes)."""
    import dask.array as da

    def size(starts, k, n):
        return (starts[k + 1] if k + 1 < len(starts) else n) - starts[k]

    grid = []
    for i in range(len(row_starts)):
        line = []
        for j in range(len(col_starts)):
            if symmetric and j < i:
                line.append(grid[j][i].T)
                continue
            block = client.submit(_block_of, blocks[i, j], pure=False)
            line.append(da.from_delayed(block, shape=(size(row_starts, i, shape[0]), size(col_starts, j, shape[1])),
                                        dtype=np.float64))
        grid.append(line)
    return da.block(grid)
