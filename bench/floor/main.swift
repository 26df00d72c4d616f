// The floor under rows 2, 3 and 7 (the tick, peak RSS, start-up): a program linked exactly as queueplayerd is
// (the same packages and C libraries, `--static-swift-stdlib`, the Makefile's release flags; see
// Package.swift's `queueplayerd-floor`) that does next to nothing: it listens on the socket
// given as its first argument, greets each client as an MPD server does (so the bench's
// `wait_accepting` sees it up), and waits for SIGTERM. What it keeps resident is what linking
// the daemon's code costs before the daemon does anything: the Swift runtime's start-up,
// the loader, the shared C libraries, and the pages of the binary that get mapped with them.
//
// Given an ALSA device and an MP3 file as well, it also plays the file there, over and over,
// with libmpg123 and alsa-lib called directly (as `mpg123 -o alsa` does, 16-bit samples in
// blocking writes): the floor of a program of this binary's making that plays through the same
// output as the daemon, so with the libraries that output loads (ALSA's pulse plugin brings
// libpulse and a dozen more). Its main thread waits, as the daemon's does
// (`QueuePlayerDaemon.main`), instead of being ended by `dispatchMain()`.
//
// Given `--tick` instead, a thread named `floor.tick` sleeps to 10 ms CLOCK_MONOTONIC deadlines,
// as bench/tick-floor.c does, and at each wake-up calls a block on a serial dispatch queue (with
// `sync`, as the daemon's clock thread enters an observer's queue) that reads the clock
// (`RealTimeClock`, the daemon's): the floor of a 10 ms periodic observer delivered on a queue,
// in this binary, with nothing else of a tick.
import AppLifecycle
import CALSA
import CDispatch  // where this build finds `timespec`'s members (MemberImportVisibility)
import CMPG123
import CShims
import Dispatch
import DaemonCore
import FeedFetch
import Foundation
import QueuePlayer
import Synchronization

let arguments = CommandLine.arguments
guard arguments.count == 2 || arguments.count == 4 || (arguments.count == 3 && arguments[2] == "--tick") else {
    FileHandle.standardError.write(Data("usage: queueplayerd-floor SOCKET [ALSA-DEVICE MP3-FILE | --tick]\n".utf8))
    exit(2)
}

/// Prints `message` and ends the program: the bench reads the exit status.
@Sendable func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("queueplayerd-floor: \(message)\n".utf8))
    exit(1)
}

/// Plays `file` on `device` until the program ends: libmpg123 decodes to 16-bit samples at the
/// file's own rate and channels, alsa-lib takes them in blocking writes (half a second of buffer,
/// as the daemon's sink asks for), and the file starts again at its end.
@Sendable func play(device: String, file: String) {
    _ = mpg123_init()
    var error: Int32 = 0
    guard let decoder = mpg123_new(nil, &error) else { fail("libmpg123: \(String(cString: mpg123_plain_strerror(error)))") }
    guard mpg123_open(decoder, file) == MPG123_OK.rawValue else { fail("cannot open \(file): \(String(cString: mpg123_strerror(decoder)))") }
    var rate = 0
    var channels: Int32 = 0
    var encoding: Int32 = 0
    guard mpg123_getformat(decoder, &rate, &channels, &encoding) == MPG123_OK.rawValue, rate > 0, channels > 0 else {
        fail("cannot read \(file)'s format: \(String(cString: mpg123_strerror(decoder)))")
    }
    mpg123_format_none(decoder)
    mpg123_format(decoder, rate, channels, Int32(MPG123_ENC_SIGNED_16.rawValue))
    var pcm: OpaquePointer?
    var result = snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, 0)
    guard result >= 0, let pcm else { fail("cannot open ALSA device \(device): \(String(cString: snd_strerror(result)))") }
    result = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(channels), UInt32(rate), 1,
                                ALSAAudioSink.defaultBufferTimeMicroseconds)
    guard result >= 0 else { fail("cannot set \(device)'s parameters: \(String(cString: snd_strerror(result)))") }
    let bytesPerFrame = 2 * Int(channels)
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096 * bytesPerFrame, alignment: 16)
    while true {
        var decoded = 0
        let status = mpg123_read(decoder, buffer, 4096 * bytesPerFrame, &decoded)
        var offset = 0
        while offset < decoded {
            let written = snd_pcm_writei(pcm, buffer + offset, snd_pcm_uframes_t((decoded - offset) / bytesPerFrame))
            if written < 0 {
                let recovered = snd_pcm_recover(pcm, Int32(written), 1)
                guard recovered >= 0 else { fail("cannot write to \(device): \(String(cString: snd_strerror(recovered)))") }
                continue
            }
            offset += Int(written) * bytesPerFrame
        }
        if status == MPG123_DONE.rawValue {
            // Back to the start; a seek that fails would leave every later read at the end.
            guard mpg123_seek(decoder, 0, SEEK_SET) >= 0 else { fail("cannot seek \(file): \(String(cString: mpg123_strerror(decoder)))") }
        } else if status != MPG123_OK.rawValue, status != MPG123_NEW_FORMAT.rawValue {
            fail("cannot decode \(file): \(String(cString: mpg123_strerror(decoder)))")
        }
    }
}

/// What the observer's block last read: kept, so that the read is not optimised away.
let observed = Atomic<UInt64>(0)

/// A 10 ms periodic observer and nothing else (`--tick`): the wake-up, a serial queue entered
/// with `sync`, and a block that reads the clock. The block captures nothing: no allocation a tick.
@Sendable func tick() {
    cshims_name_this_thread("floor.tick")
    let queue = DispatchQueue(label: "floor.observer")
    let clock = RealTimeClock.shared
    var deadline = clock.now()
    while true {
        deadline += 10_000_000
        var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) != 0 {}
        queue.sync { observed.store(clock.now(), ordering: .relaxed) }
    }
}

let path = arguments[1]
// SIGTERM is blocked before any thread starts (they inherit the mask) and taken by the main
// thread's `sigwait` below.
var terminate = sigset_t()
sigemptyset(&terminate)
sigaddset(&terminate, SIGTERM)
pthread_sigmask(SIG_BLOCK, &terminate, nil)
unlink(path)
let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
var address = sockaddr_un()
address.sun_family = sa_family_t(AF_UNIX)
withUnsafeMutableBytes(of: &address.sun_path) { bytes in
    let utf8 = Array(path.utf8.prefix(bytes.count - 1))
    bytes.copyBytes(from: utf8 + [0])
}
let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
}
guard bound == 0, listen(server, 16) == 0 else { fail("cannot listen on \(path)") }
if arguments.count == 4 {
    let (device, file) = (arguments[2], arguments[3])
    Thread { play(device: device, file: file) }.start()
} else if arguments.count == 3 {
    Thread { tick() }.start()
}
let greeter = Thread {
    let greeting = Array("OK MPD 0.23.5\n".utf8)
    while true {
        let client = accept(server, nil, nil)
        guard client >= 0 else { continue }
        _ = greeting.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
        close(client)
    }
}
greeter.start()
var received: Int32 = 0
while sigwait(&terminate, &received) != 0 {}
unlink(path)
exit(0)
