// The floor under row 3 (peak RSS): a program linked exactly as queueplayerd is (the same
// packages and C libraries, `--static-swift-stdlib`, the Makefile's release flags; see
// Package.swift's `queueplayerd-floor`) that does next to nothing: it listens on the socket
// given as its only argument, greets each client as an MPD server does (so the bench's
// `wait_accepting` sees it up), and waits for SIGTERM. What it keeps resident is what linking
// the daemon's code costs before the daemon does anything: the Swift runtime's start-up,
// the loader, the shared C libraries, and the pages of the binary that get mapped with them.
import AppLifecycle
import DaemonCore
import FeedFetch
import Foundation
import QueuePlayer
#if canImport(Glibc)
import Glibc
#endif

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: queueplayerd-floor SOCKET\n".utf8))
    exit(2)
}
let path = CommandLine.arguments[1]
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
guard bound == 0, listen(server, 16) == 0 else {
    FileHandle.standardError.write(Data("queueplayerd-floor: cannot listen on \(path)\n".utf8))
    exit(1)
}
let terminate = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .main)
signal(SIGTERM, SIG_IGN)
terminate.setEventHandler { unlink(path); exit(0) }
terminate.resume()
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
dispatchMain()
