/* ggcuda.h: the C API of libggcuda.so, graphgram's CUDA library.
 *
 * The library is opened at run time (dlopen) by the Go package
 * github.com/graphgram/graphgram/cuda; nothing links against it. Every
 * function returns GGC_OK or an error code and, on error, writes one line of
 * text (with the CUDA error's name and message where one is the cause) to err.
 *
 * Graphs are handed over packed in the octile layout of gokernel/octile (8×8
 * tiles of the adjacency, a 64-bit mask per tile with bit 8r+c for row r and
 * column c, nonzeros in increasing bit order), concatenated graph after graph;
 * see ggc_graphs. All values are float64 on the host side; the library converts
 * them to float32 on upload when asked for single precision. */
#ifndef GGCUDA_H
#define GGCUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGC_ABI_VERSION 7

/* The library is built with hidden visibility; the API is exported. */
#if defined(__GNUC__)
#define GGC_API __attribute__((visibility("default")))
#else
#define GGC_API
#endif

enum ggc_status {
    GGC_OK = 0,
    GGC_ERR_CUDA = 1,      /* a CUDA call failed; err names it */
    GGC_ERR_NO_DEVICE = 2, /* no usable device (driver missing, none present, bad index) */
    GGC_ERR_OOM = 3,       /* device memory exhausted: the caller splits the work */
    GGC_ERR_ARG = 4,       /* invalid argument */
    GGC_ERR_UNSUPPORTED = 5 /* not supported by this build: the caller uses the CPU */
};

/* Base-kernel programs (see include/gg/mk.h): postfix, leaves push, SUM and
 * PRODUCT pop nargs values, NORMALIZED rescales the top of the stack. */
enum ggc_mk_op {
    GGC_MK_CONSTANT = 1,           /* param = c */
    GGC_MK_KRONECKER_DELTA = 2,    /* param = h; columns col..col+width-1 */
    GGC_MK_SQUARE_EXPONENTIAL = 3, /* param = length scale; columns col..col+width-1 */
    GGC_MK_BROWNIAN_BRIDGE = 4,    /* param = c; column col */
    GGC_MK_SUM = 5,
    GGC_MK_PRODUCT = 6,
    GGC_MK_NORMALIZED = 7
};

#define GGC_MK_MAX_INSTR 24
#define GGC_MK_MAX_STACK 6

typedef struct {
    int32_t op, col, width, nargs;
    int32_t pidx; /* leaves: index of param among the program's hyperparameters
                   * (microkernel's EvalGrad order); -1 for SUM, PRODUCT, NORMALIZED */
    int32_t pad;
    double param;
} ggc_mk_instr;

typedef struct {
    int32_t n;    /* number of instructions */
    int32_t self; /* 1 when the program contains NORMALIZED */
    int32_t maxcol; /* one past the highest feature column read */
    int32_t nparams; /* hyperparameters (microkernel's NumParams) */
    ggc_mk_instr ins[GGC_MK_MAX_INSTR];
} ggc_mk_program;

/* Per-graph descriptor fields, GGC_DESC_FIELDS int64 per graph. */
enum {
    GGC_DESC_N = 0,        /* nodes */
    GGC_DESC_NT = 1,       /* tile rows, ceil(n/8) */
    GGC_DESC_NODE0 = 2,    /* first row in node_feat, deg, start, loop_nz */
    GGC_DESC_TILEPTR0 = 3, /* first of the graph's nt+1 entries in tile_ptr */
    GGC_DESC_CLASS0 = 4,   /* first row of the graph's edge classes in class_feat */
    GGC_DESC_NCLASS = 5,   /* number of edge classes (distinct edge feature rows) */
    GGC_DESC_NNZ = 6,      /* stored nonzeros */
    GGC_DESC_FIELDS = 8
};

/* A list of graphs packed into octiles. Tile and nonzero indices are global
 * (over the whole list); class indices in nz_class are local to the graph. */
typedef struct {
    int32_t num_graphs;
    int32_t node_cols, edge_cols; /* row strides of node_feat and class_feat */
    int32_t pad;
    int64_t total_nodes, total_tiles, total_nz, total_classes, total_tileptr;
    const int64_t* desc;       /* GGC_DESC_FIELDS per graph */
    const int32_t* tile_ptr;   /* per graph nt+1 global tile indices */
    const int32_t* tile_col;   /* per tile: its tile column */
    const uint64_t* mask;      /* per tile: bit 8r+c set iff (r, c) is stored */
    const int32_t* nz_ptr;     /* total_tiles+1: tile t's nonzeros are nz_ptr[t] <= k < nz_ptr[t+1] */
    const uint8_t* nz_pos;     /* per nonzero: its bit 8r+c */
    const double* nz_w;        /* per nonzero: edge weight */
    const int32_t* nz_class;   /* per nonzero: edge class, local to the graph */
    const double* class_feat;  /* per class: edge feature row (edge_cols) */
    const double* node_feat;   /* per node: feature row (node_cols) */
    const double* deg;         /* per node: degree, 0 replaced by 1 */
    const double* start;       /* per node: start probability */
    const int32_t* loop_nz;    /* per node: global index of its self-loop nonzero, or -1 */
    const double* cw;          /* per node: √|class| of a colour-refinement quotient's node
                                * (deg then holds the original graph's degree), 1 for a graph
                                * as given; NULL: all ones (ABI version 7) */
} ggc_graphs;

typedef struct {
    double q;          /* stopping probability in (0, 1) */
    double tol;        /* relative residual of each PCG solve */
    int32_t lmin;      /* 0 or 1 */
    int32_t max_iter;  /* PCG iteration cap */
    int32_t symmetric; /* Y is X: solve i <= j only and mirror */
    int32_t precision; /* 64 or 32 */
    int32_t device;    /* CUDA device index */
    int32_t blocks;    /* persistent blocks; 0 = as many as fit */
    int32_t flags;     /* GGC_FLAG_*, for tests */
    int32_t stage_limit; /* bytes of shared memory a solver block may stage a pair's tiles in:
                          * 0 = as much as the device allows at 2 blocks an SM, > 0 = at most
                          * that (tests), < 0 = no staging (every pair reads global memory) */
    int64_t mem_limit; /* bytes of device memory to use at most; 0 = what is free */
    double adj_tol;    /* relative residual of the adjoint solves (ggc_mgk_gram_grad) */
} ggc_mgk_options;

enum {
    GGC_FLAG_NO_TABLE = 1, /* evaluate κe inside the product for every pair (tests) */
    GGC_FLAG_DIAG = 2,     /* only K(X[i], X[i]) into out[i] (iters, resid likewise); Y is ignored */
    GGC_FLAG_NO_WARP = 4,  /* solve every pair one block a pair, none one warp a pair (tests) */
    GGC_FLAG_WIDE_ALL = 8  /* solve every Gram pair by a grid of blocks, one pair at a time (tests) */
};

/* Timings measured with CUDA events and sizes of one call. upload_ms,
 * solve_ms and download_ms are the summed times of the transfers and stages;
 * where they run on separate streams (ggc_sp_pairs) they overlap, wall_ms is
 * the time from the first upload to the last download and overlap_ms =
 * max(0, upload + solve + download − wall), the time hidden by overlapping.
 * chunks: the number of chunks the pairs were cut into. */
typedef struct {
    double upload_ms, solve_ms, download_ms;
    int32_t blocks, threads;
    int64_t scratch_bytes;
    double wall_ms, overlap_ms;
    int32_t chunks;
    int32_t staged; /* marginalized kernel: pairs whose tiles the solver read from shared memory */
    int32_t dense_cols; /* ggc_explicit_gram: feature columns in the dense panel */
    int32_t warp_pairs; /* marginalized kernel: pairs solved one warp a pair */
    int32_t wide_pairs; /* marginalized kernel: pairs solved by a grid of blocks each */
    int32_t pad;
} ggc_stats;

GGC_API int ggc_abi_version(void);

/* ggc_device_count sets *count to the number of CUDA devices; with no driver
 * or no device it returns GGC_ERR_NO_DEVICE and says why in err. */
GGC_API int ggc_device_count(int* count, char* err, size_t errlen);

/* ggc_device_info describes device dev. */
GGC_API int ggc_device_info(int dev, char* name, size_t namelen, int* cc_major, int* cc_minor,
                    int64_t* total_mem, int* sm_count, char* err, size_t errlen);

/* ggc_warm_up prepares device dev for the calls to come, so that the first
 * of them pays for its own work only: it creates the device's context, reads
 * its properties (kept for the process) and loads every kernel's code (which
 * the runtime otherwise loads on a kernel's first launch). Calls do all of
 * this themselves where it has not been done; it is worth calling ahead, in
 * parallel with other work. */
GGC_API int ggc_warm_up(int dev, char* err, size_t errlen);

/* Device memory a call allocated is kept for the next calls on the device
 * (at most an eighth of its memory; an allocation the free memory cannot
 * serve frees it first), and so is one pinned host staging buffer a device.
 * ggc_cached_memory says how many bytes are kept for dev; ggc_release_memory
 * frees them (the staging buffer unless a call is using it) and says how
 * many bytes it freed. */
GGC_API int ggc_cached_memory(int dev, int64_t* device_bytes, int64_t* pinned_bytes);
GGC_API int ggc_release_memory(int dev, int64_t* device_bytes, int64_t* pinned_bytes);

/* ggc_mgk_gram computes the marginalized-kernel Gram matrix out[i*ny + j] =
 * K(X[i], Y[j]) (Y == NULL or symmetric: Y is X). iters and resid (optional,
 * same layout) receive the PCG iterations and final relative residual of each
 * entry; a negative iters entry marks a solve that did not converge (its
 * count is -iters). stats is optional. */
GGC_API int ggc_mgk_gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                 const ggc_mk_program* edge, const ggc_mgk_options* opt, double* out,
                 int32_t* iters, double* resid, ggc_stats* stats, char* err, size_t errlen);

/* ggc_mgk_gram_grad is ggc_mgk_gram plus the gradient of every entry with
 * respect to the hyperparameters θ = (q, node-kernel parameters, edge-kernel
 * parameters), np = 1 + node->nparams + edge->nparams of them:
 * grad[(i*ny + j)*np + k] = ∂K(X[i], Y[j])/∂θ_k, as mgk.GramGrad. Each entry
 * takes two PCG solves (the primal, to opt->tol, and the adjoint, to
 * opt->adj_tol); iters holds their sum, negative when either did not converge,
 * and resid the larger final residual. GGC_FLAG_DIAG is refused. */
GGC_API int ggc_mgk_gram_grad(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                              const ggc_mk_program* edge, const ggc_mgk_options* opt, double* out, double* grad,
                              int32_t* iters, double* resid, ggc_stats* stats, char* err, size_t errlen);

/* ggc_mgk_nodal is ggc_mgk_gram (out, iters, resid as there) that also writes
 * the node-pair similarities p_i p'_i' x_(i,i') (x − V·1 with lmin = 1) of
 * every pair into nodal, a (X->total_nodes × Y->total_nodes) row-major
 * matrix, nodes graph after graph in their packed order (mgk.Nodal's layout;
 * Y == NULL or symmetric: Y is X). The matrix is assembled in device memory:
 * GGC_ERR_OOM when it does not fit beside the graphs. */
GGC_API int ggc_mgk_nodal(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                          const ggc_mk_program* edge, const ggc_mgk_options* opt, double* out, double* nodal,
                          int32_t* iters, double* resid, ggc_stats* stats, char* err, size_t errlen);

/* Shortest-path graphs (FCSP): per graph its nodes' feature rows and its
 * shortest-path edges, each unordered pair of distinct connected nodes u < v
 * once, with a length id into a table of distinct lengths shared by X and Y. */
typedef struct {
    int32_t num_graphs;
    int32_t node_cols;
    int64_t total_nodes, total_sp;
    const int64_t* node_off;  /* num_graphs+1 */
    const int64_t* sp_off;    /* num_graphs+1 */
    const int32_t* sp_u;      /* per SP edge, nodes local to the graph */
    const int32_t* sp_v;
    const int32_t* sp_len;    /* per SP edge: length id */
    const double* node_feat;  /* per node: feature row (node_cols) */
} ggc_sp_graphs;

typedef struct {
    int32_t device;
    int32_t blocks;     /* persistent blocks; 0 = as many as fit */
    int32_t num_lengths; /* distinct lengths */
    int32_t precision;  /* 64 or 32 (0 means 64): node-kernel matrices, length table and products */
    const double* lengths; /* num_lengths distinct lengths; κlength is evaluated on them once */
    int64_t mem_limit;     /* as in ggc_mgk_options */
} ggc_sp_options;

/* ggc_sp_pairs computes out[k] = K(X[pairs[2k]], Y[pairs[2k+1]]) for the
 * shortest-path kernel: Σ over ordered SP-edge pairs of
 * κnode(u,u')·κlength(d,d')·κnode(v,v') (GraKeL's convention, as
 * gokernel/spkernel). node and length are base-kernel programs (a length is a
 * one-column row); Y == NULL means X. Pairs are computed largest first in
 * chunks: a chunk's graphs not yet on the device are uploaded (from pinned
 * host memory, on a copy stream) while the previous chunk's stages run (on a
 * compute stream), and each chunk's results are downloaded on a third stream.
 * The SP-graph arrays of X and Y must stay unchanged until the call returns. */
GGC_API int ggc_sp_pairs(const ggc_sp_graphs* X, const ggc_sp_graphs* Y, const ggc_mk_program* node,
                         const ggc_mk_program* length, const ggc_sp_options* opt, const int32_t* pairs,
                         int64_t npairs, double* out, ggc_stats* stats, char* err, size_t errlen);

/* Explicit feature maps (gokernel/sparsegram.Features): a sparse matrix of
 * positive integer counts in compressed sparse row form. Row r holds the
 * columns col[ptr[r]] .. col[ptr[r+1]-1] (distinct, in [0, num_cols)) with
 * counts val[ptr[r]] .. val[ptr[r+1]-1]. ptr indexes col and val directly
 * (ptr[0] need not be 0), so a block of rows of a larger matrix is passed as a
 * pointer into its ptr array with the same col and val. */
typedef struct {
    int32_t num_rows;
    int32_t pad;
    int64_t num_cols;
    const int64_t* ptr; /* num_rows+1, nondecreasing */
    const int32_t* col;
    const uint32_t* val;
} ggc_csr;

enum ggc_semiring {
    GGC_SUM_PRODUCT = 0, /* K[i][j] = Σ_f X[i][f]·Y[j][f] */
    GGC_SUM_MIN = 1      /* K[i][j] = Σ_f min(X[i][f], Y[j][f]) */
};

typedef struct {
    int32_t device;
    int32_t semiring;  /* ggc_semiring */
    int32_t symmetric; /* Y is X: the upper triangle is computed and mirrored */
    int32_t panel;     /* columns in the dense panel: 0 = the cost model's choice, > 0 = that many
                        * (at most the contributing columns; tests), < 0 = none (all sparse) */
    int64_t mem_limit; /* as in ggc_mgk_options */
} ggc_explicit_options;

/* ggc_explicit_gram computes out[i*ny + j] = K(X[i], Y[j]) over the semiring,
 * row-major nx × ny (Y == NULL or symmetric: Y is X, out exactly symmetric),
 * as gokernel/sparsegram.Gram: sums accumulate exactly in 64-bit integers
 * (modulo 2^64, as Go's int64 wraps) and are converted once to double. The
 * most frequent columns (by nX_f·nY_f) form a dense panel multiplied tile by
 * tile; the others are summed from an inverted index with 64-bit integer
 * atomics (cuda/README.md, "Explicit features on the device"). GGC_ERR_OOM
 * when the nx × ny result, the panels and the index do not fit: the caller
 * splits the rows. */
GGC_API int ggc_explicit_gram(const ggc_csr* X, const ggc_csr* Y, const ggc_explicit_options* opt, double* out,
                              ggc_stats* stats, char* err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
