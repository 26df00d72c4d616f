/*
 * A 10 ms periodic timer and nothing else: no audio, no output, no work per tick.
 *
 * Row 2 runs it beside the players as a reference. Any program that runs a 10 ms
 * periodic observer wakes 6000 times a minute; what this loop costs per 60 s is
 * the floor of that on this machine, whatever the program does when it wakes.
 * It sleeps like queueplayerd's clock thread: to absolute CLOCK_MONOTONIC deadlines.
 * With --print it also writes `Background: <seconds since start>` after every wake-up,
 * one write(2) per line, as queueplayerd does in the background: row 4 reads those
 * lines exactly as it reads queueplayerd's, so the two jitter figures compare.
 *
 *   cc -O2 -o tick-floor tick-floor.c && ./tick-floor [--print]    (runs until killed)
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int print = argc > 1 && strcmp(argv[1], "--print") == 0;
    struct timespec start, next;
    clock_gettime(CLOCK_MONOTONIC, &start);
    next = start;
    for (;;) {
        next.tv_nsec += 10 * 1000 * 1000;
        if (next.tv_nsec >= 1000 * 1000 * 1000) {
            next.tv_nsec -= 1000 * 1000 * 1000;
            next.tv_sec += 1;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, 0) != 0) {
        }
        if (print) {
            char line[64];
            double seconds = (double)(next.tv_sec - start.tv_sec) + (next.tv_nsec - start.tv_nsec) / 1e9;
            int length = snprintf(line, sizeof line, "Background: %.2f\n", seconds);
            if (write(STDOUT_FILENO, line, (size_t)length) < 0) return 1;
        }
    }
}
