import CALSA
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// alsa-lib's configuration: its files and the hooks they name, which the first `snd_pcm_open`
/// of a process loads.
///
/// Loading it is nearly all of what the daemon's first open costs, and that open is on the way
/// to the first audio frame: Debian's configuration runs the PulseAudio plugin's hook, which
/// loads libpulse (and 25 more libraries, in a C program linked with alsa-lib alone) and asks
/// whether a sound server runs, at the first look-up of a definition: in such a program, after
/// `snd_config_update()` alone (0.4 to 0.6 ms) opening the file plugin's device still took 2.4
/// to 4.1 ms; after this load (2.8 to 4.0 ms), 0.03 to 0.05 ms. Nothing in it depends on the
/// daemon's options, so the daemon starts the load on a thread of its own before it parses
/// them, and the open finds it done or under way.
public enum ALSAConfiguration {
    /// How many loads ``loadInBackground()`` has finished in this process (for tests: a load
    /// that never ran leaves no thread behind either).
    static let loadsFinished = Atomic<Int>(0)

    /// Starts loading the configuration on a new thread (kernel name `qp.alsa-config`, gone
    /// once loaded) and returns at once.
    ///
    /// alsa-lib loads it under its global configuration lock, which `snd_pcm_open` takes too
    /// (`calsa_load_configuration`): an open that comes while it loads waits for it and uses
    /// what it loaded; one that comes later finds it loaded; nothing is loaded twice. A thread
    /// that cannot be started changes nothing: the first open loads it, as without this.
    public static func loadInBackground() {
        // Before the thread starts: errors in the configuration are the open's to report.
        calsa_silence_errors()
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        _ = pthread_create(&thread, &attributes, { _ in
            setKernelThreadName("qp.alsa-config")
            calsa_load_configuration()
            ALSAConfiguration.loadsFinished.add(1, ordering: .releasing)
            return nil
        }, nil)
    }
}
