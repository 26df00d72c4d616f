import CShims
import Foundation
import Synchronization
import Testing
@testable import DaemonCore
#if canImport(Glibc)
import Glibc
#endif

/// The `Background:` lines: the text `String(format:)` gave, and a full stdout never
/// blocks the clock thread that writes them.
@Suite struct BackgroundLineWriterTests {
    func formatted(_ seconds: Double) -> String {
        var storage = [UInt8](repeating: 0, count: BackgroundLineWriter.longestLine)
        let length = storage.withUnsafeMutableBytes { BackgroundLineWriter.format(seconds, into: $0) }
        return String(decoding: storage[..<length], as: UTF8.self)
    }

    @Test func linesReadExactlyAsStringFormatWritesThem() {
        // Both sides format with the C library's printf, so rounding is not what this checks: the
        // prefix, the newline, and the longest values against the buffer are.
        let values: [Double] = [0, -0.0, 0.004, 0.005, 0.015, 0.025, 0.125, 0.375, 0.625, 0.875, 1.005, 2.675, 9.995,
                                99.995, 0.01, 0.1, 1, 10.1, 12.34, 59.999, 179.99, 3599.995, 1e-300, 0x1p-10, 0x1p-11,
                                -0.001, -0.005, -12.345, 1e9 + 0.125, 1e11 + 0.005, 0x1p40 - 0.25,
                                0x1p40, 1e300, -.greatestFiniteMagnitude, .infinity, -.infinity, .nan]
        var mismatches: [String] = []
        for value in values {
            let expected = String(format: "Background: %.2f", value) + "\n"
            let actual = formatted(value)
            if actual != expected { mismatches.append("\(value): \(actual) vs \(expected)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(formatted(12.34) == "Background: 12.34\n")
        #expect(formatted(-.greatestFiniteMagnitude).count == "Background: ".count + 313 + 1)
    }

    /// What the daemon's stdout may be in the background: a shell's or the bench's pipe, or
    /// the journal's stream socket under systemd.
    enum Channel: CustomStringConvertible, CaseIterable {
        case pipe, socket
        var description: String { self == .pipe ? "pipe" : "stream socket" }

        /// The read end and the write end.
        func open() throws -> (Int32, Int32) {
            var fds: [Int32] = [-1, -1]
            switch self {
            case .pipe: try #require(Glibc.pipe(&fds) == 0)
            case .socket: try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            }
            return (fds[0], fds[1])
        }
    }

    /// Pipes and sockets are written by one non-blocking write a line; a regular file, by a
    /// plain write.
    @Test func theWriteMethodFollowsTheDescriptor() throws {
        for channel in Channel.allCases {
            let (readEnd, writeEnd) = try channel.open()
            defer {
                close(readEnd)
                close(writeEnd)
            }
            #expect(BackgroundLineWriter.WriteMethod(for: writeEnd) == .nonBlocking, "\(channel)")
        }
        try withTemporaryFile { file, _ in
            #expect(BackgroundLineWriter.WriteMethod(for: file) == .plain)
        }
    }

    /// Runs `body` with a new file opened for writing, and its path; removes it afterwards.
    func withTemporaryFile(_ body: (Int32, String) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lines-\(UUID().uuidString)").path
        let file = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(file >= 0)
        defer {
            close(file)
            unlink(path)
        }
        try body(file, path)
    }

    /// A descriptor whose kernel refuses the non-blocking write (EOPNOTSUPP: a file on ext4
    /// or tmpfs) loses no line: the writer polls and writes from then on.
    @Test func aRefusedNonBlockingWriteFallsBackWithoutLosingALine() throws {
        try withTemporaryFile { file, path in
            // Whether this file system refuses it; one that takes it writes the lines all the same.
            let probe = cshims_write_nowait(file, nil, 0)
            let refused = probe < 0 && errno == EOPNOTSUPP
            let writer = BackgroundLineWriter(descriptor: file, method: .nonBlocking) { _ in }
            for index in 0..<50 { writer.line(seconds: Double(index) / 100) }
            if refused { #expect(writer.method == .polled) }
            let written = try String(contentsOfFile: path, encoding: .utf8)
            #expect(written == (0..<50).map { String(format: "Background: %.2f\n", Double($0) / 100) }.joined())
        }
    }

    /// A pipe or socket nobody reads: every line returns at once; once it is read again the
    /// newest lines follow, whole and in order, and the loss is reported once.
    @Test(arguments: Channel.allCases)
    func aFullOutputNeverBlocksTheWriterAndOutputResumesWithTheNewestLines(_ channel: Channel) throws {
        let (readEnd, writeEnd) = try channel.open()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        // Fill it (non-blocking only for the filling, on this test's own descriptor).
        let flags = fcntl(writeEnd, F_GETFL)
        _ = fcntl(writeEnd, F_SETFL, flags | O_NONBLOCK)
        var filler = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        filler[4095] = UInt8(ascii: "\n")
        var filled = 0
        while true {
            let written = write(writeEnd, filler, filler.count)
            if written <= 0 { break }
            filled += written
        }
        _ = fcntl(writeEnd, F_SETFL, flags)
        try #require(filled > 0)

        let lost = Mutex<[Int]>([])
        let writer = BackgroundLineWriter(descriptor: writeEnd) { count in lost.withLock { $0.append(count) } }
        let lines = 1_000
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for index in 0..<lines { writer.line(seconds: Double(index) / 100) }
            done.signal()
        }
        let returned = done.wait(timeout: .now() + 3) == .success
        #expect(returned, "writing to a full \(channel) blocked the writer")

        // Read it again (this also lets a blocked writer finish).
        var output: [UInt8] = []
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count <= 0 { break }
                output += buffer[..<count]
            }
        }
        drain()
        if !returned { _ = done.wait(timeout: .now() + 10) }
        #expect(output.count == filled, "nothing was written while the \(channel) was full")
        output.removeAll()

        writer.line(seconds: 12.34)
        drain()
        let text = String(decoding: output, as: UTF8.self)
        let received = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(received.last == "", "whole lines only")
        let kept = received.dropLast().map(String.init)
        #expect(kept.last == "Background: 12.34")
        let expectedTail = (0..<lines).suffix(kept.count - 1).map { String(format: "Background: %.2f", Double($0) / 100) }
        #expect(Array(kept.dropLast()) == expectedTail, "the newest lines, in order")
        #expect(kept.count > 100 && text.utf8.count <= BackgroundLineWriter.pendingLimit + 64)
        #expect(lost.withLock { $0 } == [lines - (kept.count - 1)], "the loss, reported once")

        // Flowing again: a line goes straight out, and nothing more is reported.
        output.removeAll()
        writer.line(seconds: 0.5)
        drain()
        #expect(String(decoding: output, as: UTF8.self) == "Background: 0.50\n")
        #expect(lost.withLock { $0.count } == 1)
    }
}
