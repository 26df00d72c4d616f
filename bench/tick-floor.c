/*
 * A 10 ms periodic timer and nothing else: no audio, no output, no work per tick.
 *
 * Row 2 runs it beside the players as a reference. Any program that runs a 10 ms
 * periodic observer wakes 6000 times a minute; what this loop costs per 60 s is
 * the floor of that on this machine, whatever the program does when it wakes.
 * It sleeps like queueplayerd's clock thread: to absolute CLOCK_MONOTONIC deadlines.
 *
 *   cc -O2 -o tick-floor tick-floor.c && ./tick-floor     (runs until killed)
 */
#include <time.h>

int main(void) {
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        next.tv_nsec += 10 * 1000 * 1000;
        if (next.tv_nsec >= 1000 * 1000 * 1000) {
            next.tv_nsec -= 1000 * 1000 * 1000;
            next.tv_sec += 1;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, 0) != 0) {
        }
    }
}
