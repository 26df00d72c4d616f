import CShims
import DaemonAssembly
import DaemonCore
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import QueuePlayer

/// `queueplayerd`: plays a queue of MP3 files through ALSA, like an iOS app with the audio
/// background mode. The options are the settings' (DaemonCore's `Settings`), read by
/// `SettingsCommandLine`; `--help` and the man pages are made from the same declarations.
@main
enum QueuePlayerDaemon {
    /// Synchronous: the main thread starts the daemon as a task and waits for it to end.
    ///
    /// An `async` main would hand the main thread to `dispatchMain()`, which ends it with
    /// `pthread_exit`: glibc's forced unwind of its stack reads the executable's unwind tables
    /// (`.eh_frame_hdr`, `.eh_frame`, `.gcc_except_table`), and the kernel maps them in large
    /// page-cache blocks, about 1 MiB resident for the daemon's whole life. The main thread
    /// therefore does not serve the main dispatch queue: nothing in the daemon uses it (every
    /// time observer and every queue of its own is named), and nothing may.
    static func main() {
        // glibc gives each thread that meets contention a malloc arena of its own (up to eight a
        // core), each keeping freed memory resident; the daemon's threads allocate little and the
        // render thread nothing per buffer, so two are enough.
        cshims_limit_malloc_arenas(2)
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The ALSA device is opened at start; alsa-lib's configuration, most of that open's
        // cost, loads on another core while the arguments and the file are read.
        if OutputChoice.commandLineMayOpenALSA(arguments) { ALSAConfiguration.loadInBackground() }
        switch SettingsCommandLine.parse(arguments) {
        case .failure(let error):
            exitWithUsage(error.description)
        case .success(.help):
            write(SettingsDocuments.help, to: STDOUT_FILENO)
        case .success(.version):
            write(DaemonVersion.description + "\n", to: STDOUT_FILENO)
        case .success(.document(let document)):
            write(document.text, to: STDOUT_FILENO)
        case .success(.completion(let shell)):
            write(shell.script, to: STDOUT_FILENO)
        case .success(.run(let config, let settings)):
            let finished = DispatchSemaphore(value: 0)
            Task.detached {
                await run(config: config, settings: settings)
                finished.signal()
            }
            finished.wait()
        }
    }

    /// The configuration file under the command line, checked (a mistake in either is a usage
    /// error, status 64, before anything starts), then the daemon until it stops.
    static func run(config: String?, settings: DaemonSettings) async {
        // Read once for the whole start-up: `ProcessInfo.processInfo.environment` builds the
        // dictionary afresh at each call.
        let environment = ProcessInfo.processInfo.environment
        let options: DaemonOptions
        do {
            options = try settings.options(over: ConfigurationFile.load(path: config, environment: environment))
        } catch let error as ConfigurationFileError {
            exitWithUsage(error.description)
        } catch let error as DaemonOptionError {
            exitWithUsage(error.description)
        } catch {
            exitWithUsage("\(error)")
        }
        Daemon.bootstrapLogging(environment: environment)
        do {
            try await Daemon.run(options: options, environment: environment)
        } catch let error as DaemonOptionError {
            exitWithUsage(error.description)
        } catch {
            write("Error: \(error)\n", to: STDERR_FILENO)
            exit(1)
        }
    }

    /// `Error: WHY`, the usage, and status 64 (EX_USAGE), which systemd does not restart for.
    static func exitWithUsage(_ message: String) -> Never {
        write("Error: \(message)\n\(SettingsCommandLine.usage)\n", to: STDERR_FILENO)
        exit(64)
    }

    /// All of `text` in as few writes as the descriptor takes.
    static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
