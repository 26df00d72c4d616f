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

/// Loads alsa-lib's global configuration as the first `snd_pcm_open` of a process would: the
/// files (`snd_config_update_ref`), and the hooks they name, which run when a definition is
/// first looked up (Debian's PulseAudio hook among them); `pcm.null` is one alsa-lib's own
/// configuration defines. Both calls hold alsa-lib's global configuration lock, as an open's do.
static inline void calsa_load_configuration(void) {
    snd_config_t *top = NULL;
    if (snd_config_update_ref(&top) < 0 || top == NULL) return;
    snd_config_t *definition = NULL;
    if (snd_config_search_definition(top, "pcm", "null", &definition) >= 0 && definition != NULL) {
        snd_config_delete(definition);
    }
    snd_config_unref(top);
}
#endif
