/* bcryptprimitives.dll for the wine test of the Windows wheel only (never shipped).
 *
 * Go's runtime (Go >= 1.22) loads bcryptprimitives.dll from System32 at start-up
 * and takes its random bytes from ProcessPrng; Windows 10 and later have it, but
 * Debian 12's wine 8.0 has no such DLL, so every Go DLL aborts there ("fatal error:
 * bcryptprimitives.dll not found"). packaging/build_wheels_windows.sh builds this
 * file with zig into the wine prefix's system32: ProcessPrng as Windows documents
 * it (fill the buffer with random bytes, always return TRUE), from wine's own
 * BCryptGenRandom with the system-preferred RNG.
 */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    while (size > 0) {
        ULONG n = size > 0x40000000 ? 0x40000000 : (ULONG)size;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            RaiseFailFastException(NULL, NULL, 0); /* Windows' ProcessPrng cannot fail */
        data += n;
        size -= n;
    }
    return TRUE;
}
