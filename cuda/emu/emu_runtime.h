// emu_runtime.h: the CUDA runtime calls of src/ggcuda.cu, mocked in host memory
// for the emulation build of the library (emu_lib.cc): one "device" whose
// memory is the host's, copies are memcpy, streams and events are no-ops with
// wall-clock timings. $GGCUDA_EMU_FREE sets the free memory it reports (bytes,
// default 1 GiB) so that the out-of-memory paths can be exercised.
#pragma once
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "../hostref/emu.h"

enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorNotSupported = 801,
    cudaErrorSystemDriverMismatch = 803,
    cudaErrorCompatNotSupportedOnDevice = 804
};
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
typedef struct emu_stream* cudaStream_t;
typedef std::chrono::steady_clock::time_point* cudaEvent_t;
constexpr unsigned cudaStreamNonBlocking = 1;

struct cudaDeviceProp {
    char name[256];
    int major, minor;
    size_t totalGlobalMem;
    int multiProcessorCount;
};

inline const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    default: return "emulated error";
    }
}
inline const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    default: return "cudaErrorUnknown";
    }
}
inline cudaError_t cudaGetDeviceCount(int* n) {
    *n = 1;
    return cudaSuccess;
}
inline int& emu_current_device() {
    static int d = 0;
    return d;
}
inline cudaError_t cudaSetDevice(int d) {
    if (d != 0) return cudaErrorInvalidDevice;
    emu_current_device() = d;
    return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* d) {
    *d = emu_current_device();
    return cudaSuccess;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
    if (d != 0) return cudaErrorInvalidDevice;
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof p->name, "graphgram host emulation");
    p->major = 0, p->minor = 0;
    p->totalGlobalMem = size_t(1) << 30;
    p->multiProcessorCount = 2;
    return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t* free_b, size_t* total_b) {
    const char* e = getenv("GGCUDA_EMU_FREE");
    *free_b = e ? (size_t)strtoull(e, nullptr, 10) : size_t(1) << 30;
    *total_b = size_t(1) << 30;
    return cudaSuccess;
}
template <typename K>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, K, int, size_t) {
    *n = 1;
    return cudaSuccess;
}
inline cudaError_t cudaMalloc(void** p, size_t bytes) {
    *p = malloc(bytes);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void* p) {
    free(p);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t) {
    memcpy(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* d, int v, size_t n, cudaStream_t) {
    memset(d, v, n);
    return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
    *s = nullptr;
    return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
    *e = new std::chrono::steady_clock::time_point();
    return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
    *e = std::chrono::steady_clock::now();
    return cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
    *ms = std::chrono::duration<float, std::milli>(*b - *a).count();
    return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete e;
    return cudaSuccess;
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
