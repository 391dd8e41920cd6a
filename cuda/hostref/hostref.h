/* hostref.h: the host (g++) build of cuda/include/gg, for the Go tests. */
#ifndef GG_HOSTREF_H
#define GG_HOSTREF_H
#include <stdint.h>
#include "ggcuda.h"
#ifdef __cplusplus
extern "C" {
#endif
double hr_mk_eval64(const ggc_mk_program* p, const double* x, const double* y);
float hr_mk_eval32(const ggc_mk_program* p, const float* x, const float* y);
/* hr_mk_eval_d* return k(x, y) and set *d to its derivative with respect to
 * hyperparameter t (mk_eval_d). */
double hr_mk_eval_d64(const ggc_mk_program* p, const double* x, const double* y, int t, double* d);
float hr_mk_eval_d32(const ggc_mk_program* p, const float* x, const float* y, int t, float* d);
/* hr_tile_pair runs both primitives on one tile pair with a κe table kappa
 * (na × nb, by nonzero) on block X, writing the dense result to yd and the
 * sparse one to ys (64 entries each, 8r + r'). */
void hr_tile_pair64(uint64_t ma, const uint8_t* pa, const double* wa, uint64_t mb, const uint8_t* pb,
                    const double* wb, const double* kappa, const double* X, double* yd, double* ys);
void hr_tile_pair32(uint64_t ma, const uint8_t* pa, const float* wa, uint64_t mb, const uint8_t* pb,
                    const float* wb, const float* kappa, const float* X, float* yd, float* ys);
/* hr_mulw sets y = W·x for graph ga of A and gb of B (float64), with the edge
 * kernel tabulated over classes (table = 1) or evaluated in the product. */
int hr_mulw(const ggc_graphs* A, int ga, const ggc_graphs* B, int gb, const ggc_mk_program* edge, int table,
            const double* x, double* y);
/* hr_mgk_gram is the serial host twin of ggc_mgk_gram, same arguments. */
int hr_mgk_gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node, const ggc_mk_program* edge,
                const ggc_mgk_options* opt, int table, double* out, int32_t* iters, double* resid, char* err,
                size_t errlen);
/* hr_mgk_gram_grad is the serial host twin of ggc_mgk_gram_grad (grad
 * layout as there); table chooses the κe path. */
int hr_mgk_gram_grad(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                     const ggc_mk_program* edge, const ggc_mgk_options* opt, int table, double* out, double* grad,
                     int32_t* iters, char* err, size_t errlen);
/* hr_emu_gram_grad runs the gradient kernels (mgk_prep, mgk_gsolve,
 * mgk_gterms) on host threads, like hr_emu_gram. */
int hr_emu_gram_grad(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                     const ggc_mk_program* edge, const ggc_mgk_options* opt, int64_t chunk_words, double* out,
                     double* grad, int32_t* iters, char* err, size_t errlen);
/* hr_emu_gram runs the library's device kernels on host threads (emu/emu.h), in
 * chunks of at most chunk_words of work space. */
int hr_emu_gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node, const ggc_mk_program* edge,
                const ggc_mgk_options* opt, int64_t chunk_words, double* out, int32_t* iters, char* err,
                size_t errlen);
/* hr_emu_staged returns the number of pairs of the latest hr_emu_gram or
 * hr_emu_gram_grad call whose solver block reported (MgkResult.staged) that
 * it read the pair's tiles from shared memory. opt->stage_limit as in
 * ggc_mgk_options, on an emulated device with an sm_80's shared memory. */
int64_t hr_emu_staged(void);
/* hr_emu_sp runs the shortest-path kernels (src/sp.cuh) on host threads in
 * precision 64 or 32. */
int hr_emu_sp(const ggc_sp_graphs* X, const ggc_sp_graphs* Y, const ggc_mk_program* node,
              const ggc_mk_program* length, const double* lengths, int L, const int32_t* pairs, int64_t npairs,
              int blocks, int64_t chunk_words, int precision, double* out);
/* The same four built with the GPU's block sizes (emu256.cc). */
int hr_emu256_gram_grad(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                        const ggc_mk_program* edge, const ggc_mgk_options* opt, int64_t chunk_words, double* out,
                        double* grad, int32_t* iters, char* err, size_t errlen);
int hr_emu256_gram(const ggc_graphs* X, const ggc_graphs* Y, const ggc_mk_program* node,
                   const ggc_mk_program* edge, const ggc_mgk_options* opt, int64_t chunk_words, double* out,
                   int32_t* iters, char* err, size_t errlen);
int64_t hr_emu256_staged(void);
int hr_emu256_sp(const ggc_sp_graphs* X, const ggc_sp_graphs* Y, const ggc_mk_program* node,
                 const ggc_mk_program* length, const double* lengths, int L, const int32_t* pairs, int64_t npairs,
                 int blocks, int64_t chunk_words, int precision, double* out);
/* hr_emu_threads and hr_emu256_threads write the block sizes of their build:
 * the solvers, mgk_prep/mgk_gterms, the shortest-path kernels. */
void hr_emu_threads(int* out);
void hr_emu256_threads(int* out);
/* hr_emu_seed returns the emulator's base seed ($GGCUDA_EMU_SEED). */
uint64_t hr_emu_seed(void);
/* hr_emu_planted runs the planted-defect kernels (emu_planted.cc, tests of
 * the emulator itself); see there. */
int64_t hr_emu_planted(int which, int blocks, int threads, int iters);
#ifdef __cplusplus
}
#endif
#endif
