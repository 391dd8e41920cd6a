// emu_planted.cc: small kernels with defects planted on purpose, and their
// correct twins, run on the emulator (emu/emu.h) by hr_emu_planted for the tests
// of the emulator itself (harsh_test.go): a defect that hardware would show
// must show here too, and the correct twin must pass.
#include "../emu/emu.h"
// emu.h first: the CUDA keywords must be defined before the kernels.
#include <vector>

#include "hostref.h"

namespace {

// job_loop: persistent blocks pull njobs jobs from *counter and count each
// job they run in done[job] (each must be run exactly once). atomic selects
// the correct counter (next_job's atomicAdd); without it the counter is read
// by thread 0, the block agrees on the job, and thread 0 writes it back
// incremented: a read-modify-write that is not atomic, whose window spans a
// barrier, so that another block running at the same time takes the same job.
void job_loop(int* counter, int njobs, int* done, bool atomic) {
    GG_SHARED(int, slot, );
    GG_SHARED(int, red, [32]);
    for (;;) {
        if (threadIdx.x == 0) slot = atomic ? atomicAdd(counter, 1) : *counter;
        __syncthreads();
        const int job = slot;
        if (!atomic && threadIdx.x == 0) *counter = job + 1;
        __syncthreads();
        if (job >= njobs) return;
        // A little block-wide work per job (a reduction), as the solvers do.
        red[threadIdx.x % 32] = 0;
        __syncthreads();
        atomicAdd(&red[threadIdx.x % 32], 1);
        __syncthreads();
        if (threadIdx.x == 0) atomicAdd(&done[job], red[0] > 0 ? 1 : 0);
        __syncthreads();
    }
}

// exchange: every thread writes its entry of a shared array and then reads
// the entry of the mirrored thread (another warp's); with sync the write and
// the read are separated by __syncthreads, without it they race.
void exchange(double* out, bool sync) {
    GG_SHARED(double, buf, [1024]);
    const unsigned t = threadIdx.x, n = blockDim.x;
    buf[t] = 1000.0 * blockIdx.x + t;
    if (sync) __syncthreads();
    out[blockIdx.x * n + t] = buf[n - 1 - t];
}

// diverge_exit: the second half of the block leaves before a __syncthreads
// that the first half waits at.
void diverge_exit(int* out) {
    if (threadIdx.x >= blockDim.x / 2) return;
    __syncthreads();
    out[blockIdx.x] = 1;
}

// diverge_sites: the two halves of the block wait at two different
// __syncthreads.
void diverge_sites(int* out) {
    if (threadIdx.x < blockDim.x / 2) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    out[blockIdx.x] = 1;
}

// diverge_warp: lane 0 of each warp leaves before a shuffle.
void diverge_warp(int* out) {
    if ((threadIdx.x & 31) == 0) return;
    const int v = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 1);
    out[blockIdx.x] = v;
}

}  // namespace

// hr_emu_planted runs planted kernel `which` iters times with blocks blocks of
// threads threads and returns the number of wrong results (0: correct):
// 0/1 the job counter with/without the atomic (40 jobs; a job run twice or
// never is one error), 2/3 the shared-memory exchange with/without the
// barrier (a wrong entry is one error), 4 a thread exiting before a barrier,
// 5 two barriers, 6 a lane exiting before a shuffle (these three abort in
// the emulator's divergence check and do not return).
extern "C" int64_t hr_emu_planted(int which, int blocks, int threads, int iters) {
    int64_t bad = 0;
    for (int it = 0; it < iters; it++) {
        if (which == 0 || which == 1) {
            const int njobs = 40;
            std::vector<int> done(njobs, 0);
            int counter = 0;
            emu::launch(blocks, threads, [&] { job_loop(&counter, njobs, done.data(), which == 0); }, 0,
                        which == 0 ? "job_loop(atomic)" : "job_loop(racy)");
            for (int d : done) bad += d != 1;
        } else if (which == 2 || which == 3) {
            std::vector<double> out((size_t)blocks * threads);
            emu::launch(blocks, threads, [&] { exchange(out.data(), which == 2); }, 0,
                        which == 2 ? "exchange(barrier)" : "exchange(no barrier)");
            for (int b = 0; b < blocks; b++)
                for (int t = 0; t < threads; t++) bad += out[(size_t)b * threads + t] != 1000.0 * b + (threads - 1 - t);
        } else {
            std::vector<int> out(blocks);
            emu::launch(blocks, threads, [&] {
                if (which == 4) diverge_exit(out.data());
                else if (which == 5) diverge_sites(out.data());
                else diverge_warp(out.data());
            }, 0, which == 4 ? "diverge_exit" : which == 5 ? "diverge_sites" : "diverge_warp");
        }
    }
    return bad;
}
