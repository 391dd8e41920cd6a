// persistent.cuh: the job loop of persistent blocks (mgk_solve, mgk_gsolve,
// sp_walk), which pull jobs, largest first, from a counter in device memory.
#pragma once

namespace gg {

// next_job returns the block's next job index (njobs or more: none left),
// the same to every thread. slot is a __shared__ int of the kernel. The
// second barrier keeps thread 0 from overwriting slot with the following job
// before every thread has read this one.
__device__ inline int next_job(int* counter, int& slot) {
    if (threadIdx.x == 0) slot = atomicAdd(counter, 1);
    __syncthreads();
    const int job = slot;
    __syncthreads();
    return job;
}

}  // namespace gg
