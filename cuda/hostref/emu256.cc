// emu256.cc: emu.cc built again with the GPU's block sizes (256 threads: 8
// warps for mgk_solve/mgk_gsolve and sp_walk, 256 for mgk_prep, mgk_gterms
// and sp_vertex), so that the 8-warp code paths (block reductions over 8
// warps, warps owning every 8th output block) run on the emulator too. The
// kernels' namespace and the C entry points are renamed so that both builds
// live in one library without clashing (the kernels' templates would
// otherwise be one symbol with two definitions).
#define GG_EMU_SECOND_BUILD 1
#define GG_MGK_THREADS 256
#define GG_PREP_THREADS 256
#define GG_SP_THREADS 256
#define gg gg256
#define hr_emu_gram hr_emu256_gram
#define hr_emu_gram_grad hr_emu256_gram_grad
#define hr_emu_staged hr_emu256_staged
#define hr_emu_sp hr_emu256_sp
#define hr_emu_threads hr_emu256_threads
#include "emu.cc"
