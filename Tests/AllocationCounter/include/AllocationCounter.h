#ifndef QUEUEPLAYER_ALLOCATION_COUNTER_H
#define QUEUEPLAYER_ALLOCATION_COUNTER_H
/// Counts the calls of `malloc` made on each thread of the test process.
///
/// The test executable defines `malloc` itself (passing each call on to glibc's
/// `__libc_malloc`), so every library's calls land here; glibc 2.34 removed the malloc hooks
/// this would once have used. Tests read a thread's count before and after the work they
/// check (from that thread), to state that the work allocates nothing.
#include <stddef.h>
#include <stdint.h>

/// The calls of `malloc` made on the calling thread so far.
uint64_t allocation_count_this_thread(void);

/// The largest `malloc` made on the calling thread since the last call of this (or since the
/// thread began), and starts over: a test that calls it before and after some work learns
/// the largest block that work asked for (a size a hostile file claims must never be one).
size_t allocation_largest_this_thread(void);
#endif
