#ifndef QUEUEPLAYER_CSHIMS_SHIM_H
#define QUEUEPLAYER_CSHIMS_SHIM_H
/// The C library calls Swift cannot make because they are variadic (`syscall`,
/// `snprintf`, `prctl`), each behind one small non-variadic function.
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

/// The count, to pass to `cfutex_wait` after deciding to sleep.
static inline uint32_t cfutex_load(uint32_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Sleeps while the count is still `seen`, until `deadline` (absolute, CLOCK_MONOTONIC;
/// NULL: no deadline). Returns at once if the count moved since it was read.
static inline void cfutex_wait(uint32_t *word, uint32_t seen, const struct timespec *deadline) {
    syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE, seen, deadline, NULL, FUTEX_BITSET_MATCH_ANY);
}

/// Bumps the count and wakes the sleeper.
static inline void cfutex_bump_and_wake(uint32_t *word) {
    __atomic_fetch_add(word, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
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

#endif
