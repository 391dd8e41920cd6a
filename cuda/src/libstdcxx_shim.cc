// Compiled only into the portable link of libggcuda.so (cuda/build.py
// portable_link), which has zig's libc++abi where libstdc++ would be. The
// host code that nvcc compiles with g++ instantiates std::vector from
// libstdc++'s headers, and those call one out-of-line libstdc++ function that
// libc++abi does not have. It throws what libstdc++'s would: std::length_error
// lives in namespace std in both runtimes (their shared exception ABI).
#include <stdexcept>

namespace std {
[[noreturn]] void __throw_length_error(const char* what) { throw length_error(what); }
}  // namespace std
