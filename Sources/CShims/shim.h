#ifndef QUEUEPLAYER_CSHIMS_SHIM_H
#define QUEUEPLAYER_CSHIMS_SHIM_H
/// The C library calls Swift cannot make because they are variadic (`syscall`,
/// `snprintf`, `prctl`), each behind one small non-variadic function.
#include <errno.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/// An event count on a 32-bit word, for a thread that sleeps until an absolute
/// CLOCK_MONOTONIC deadline or until another thread bumps the count: one futex
/// wait per sleep, and a wake-up system call only when a sleeper is to be woken.

/// `futex(2)` made with the system-call instruction itself, returning the kernel's result
/// (-errno on failure): the clock thread makes one per tick, and glibc's `syscall()` and its
/// `errno` are calls into the shared libc, pages a tick otherwise never touches. Elsewhere than
/// x86-64 and AArch64, glibc's `syscall()`.
static inline long cfutex_call(uint32_t *word, int op, uint32_t value, const struct timespec *deadline, uint32_t bitset) {
#if defined(__x86_64__)
    register long r10 __asm__("r10") = (long)deadline;
    register long r8 __asm__("r8") = 0;
    register long r9 __asm__("r9") = (long)bitset;
    long result;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "0"((long)SYS_futex), "D"(word), "S"((long)op), "d"((long)value), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return result;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = SYS_futex;
    register long x0 __asm__("x0") = (long)word;
    register long x1 __asm__("x1") = op;
    register long x2 __asm__("x2") = value;
    register long x3 __asm__("x3") = (long)deadline;
    register long x4 __asm__("x4") = 0;
    register long x5 __asm__("x5") = bitset;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
    return x0;
#else
    long result = syscall(SYS_futex, word, op, value, deadline, NULL, bitset);
    return result == -1 ? -errno : result;
#endif
}

/// The count, to pass to `cfutex_wait` after deciding to sleep.
static inline uint32_t cfutex_load(uint32_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Sleeps while the count is still `seen`, until `deadline` (absolute, CLOCK_MONOTONIC;
/// NULL: no deadline). Returns at once if the count moved since it was read. Returns 1 if it
/// returned because the deadline passed (the clock is then known to be past it), 0 otherwise.
static inline int cfutex_wait(uint32_t *word, uint32_t seen, const struct timespec *deadline) {
    return cfutex_call(word, FUTEX_WAIT_BITSET_PRIVATE, seen, deadline, FUTEX_BITSET_MATCH_ANY) == -ETIMEDOUT;
}

/// Bumps the count and wakes the sleeper.
static inline void cfutex_bump_and_wake(uint32_t *word) {
    __atomic_fetch_add(word, 1, __ATOMIC_RELEASE);
    cfutex_call(word, FUTEX_WAKE_PRIVATE, 1, NULL, 0);
}

/// Writes `value` as `printf("%.2f")` does into `buffer` (NUL-terminated, cut to `size`);
/// returns the length of the whole text, as `snprintf` does.
static inline int cshims_format_hundredths(char *buffer, size_t size, double value) {
    return snprintf(buffer, size, "%.2f", value);
}
/// Names the calling thread for the kernel (`comm`, at most 15 bytes; longer is cut).
static inline void cshims_name_this_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
/// Caps glibc's malloc arenas at `arenas` (`mallopt(M_ARENA_MAX)`, which Swift's Glibc module
/// does not import): each thread that meets contention otherwise gets one of its own, up to eight
/// a core, each keeping what was freed in it resident. Call before the threads start.
#include <malloc.h>
static inline void cshims_limit_malloc_arenas(int arenas) {
    mallopt(M_ARENA_MAX, arenas);
}
/// Makes C's stderr line-buffered (`stderr` is a global Swift 6 will not touch): what writes to it
/// a byte at a time then costs one write(2) a line. Call before anything writes to it.
#include <stdio.h>
static inline void cshims_line_buffer_stderr(void) {
    setvbuf(stderr, NULL, _IOLBF, 0);
}

/// One `write(2)` that fails with EAGAIN where a plain one would wait: `pwritev2(2)` at the
/// file position with `RWF_NOWAIT` (the flag is Linux 4.14's; pipes, sockets and terminals take
/// it on current kernels), called through `syscall()`, as glibc declares `pwritev2` only for
/// `_GNU_SOURCE`. Returns what `write` returns: -1 with EOPNOTSUPP (or EINVAL, ENOSYS) where the
/// descriptor or the kernel does not take the flag (files on ext4 and tmpfs, for two).
#include <sys/uio.h>
#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif
static inline long cshims_write_nowait(int descriptor, const void *bytes, size_t count) {
    struct iovec vector = { (void *)bytes, count };
    return syscall(SYS_pwritev2, descriptor, &vector, 1, (long)-1, (long)-1, RWF_NOWAIT);
}

#endif
