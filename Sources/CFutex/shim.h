#ifndef QUEUEPLAYER_CFUTEX_SHIM_H
#define QUEUEPLAYER_CFUTEX_SHIM_H
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/// An event count on a 32-bit word, for a thread that sleeps until an absolute
/// CLOCK_MONOTONIC deadline or until another thread bumps the count: one futex
/// wait per sleep, and a wake-up system call only when a sleeper is to be woken.
/// (`syscall` is variadic, so Swift cannot call it: hence this shim.)

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
#endif
