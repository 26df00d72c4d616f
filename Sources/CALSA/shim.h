#ifndef QUEUEPLAYER_CALSA_SHIM_H
#define QUEUEPLAYER_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#include <poll.h>
#include <sys/eventfd.h>

/// Silences alsa-lib's default error handler, which prints to stderr; the Swift
/// wrapper reports errors through its own logging instead. (A variadic C function
/// type cannot be written in Swift, hence this shim.)
static void calsa_error_silent(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void calsa_silence_errors(void) {
    snd_lib_error_set_handler(calsa_error_silent);
}
#endif
