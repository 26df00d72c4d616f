#include "AllocationCounter.h"
#include <stddef.h>

extern void *__libc_malloc(size_t size);

static __thread uint64_t allocations;
static __thread size_t largest;

void *malloc(size_t size) {
    allocations += 1;
    if (size > largest) largest = size;
    return __libc_malloc(size);
}

uint64_t allocation_count_this_thread(void) {
    return allocations;
}

size_t allocation_largest_this_thread(void) {
    size_t result = largest;
    largest = 0;
    return result;
}
