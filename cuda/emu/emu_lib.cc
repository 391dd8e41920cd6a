// emu_lib.cc: libggcuda.so built by g++ from src/ggcuda.cu with the kernels run
// on host threads (emu.h, beside it) and the CUDA runtime mocked (emu_runtime.h). It
// exports the same C API, so the Go bridge and the GPU test suite can run
// against it on machines without a GPU (slowly). Built by build.py
// (build_emulated) for the tests; never shipped.
#define GG_EMU 1
// The emulation's small blocks (fewer host threads), unless build.py asks for
// the GPU's (the headers' defaults, 256 threads: libggcuda_emu256.so).
#if !GG_EMU_GPU_SIZES
#define GG_MGK_THREADS 64
#define GG_PREP_THREADS 32
#define GG_SP_THREADS 64
#define GG_EX_THREADS 64
#endif
#include "emu_runtime.h"
#include "../src/ggcuda.cu"
