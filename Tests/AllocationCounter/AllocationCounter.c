#include "AllocationCounter.h"
#include <stddef.h>

extern void *__libc_malloc(size_t size);

static __thread uint64_t allocations;

void *malloc(size_t size) {
    allocations += 1;
    return __libc_malloc(size);
}

uint64_t allocation_count_this_thread(void) {
    return allocations;
}
