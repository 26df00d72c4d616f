import Foundation
import HTTPStreaming
import QueuePlayer
import Synchronization
import Testing
import TestSupport

/// Live streams (no length, `icy-metaint`) from a scripted Icecast-like server: `Icy-MetaData: 1`
/// asked for, the name and each title taken from the stream (titles observed in order, as their
/// audio is decoded), a dropped connection played on from the live edge, and a server gone for
/// good failing the item once the retry time is spent.
@Suite(.serialized) struct LiveStreamTests {
    /// A CBR stream without a LAME/Xing frame (`lame -t`), as a radio source sends.
    static let audio: Data = {
        let directory = try! TestMedia.scratchDirectory()
        let wav = directory.appendingPathComponent("tone.wav")
        let mp3 = directory.appendingPathComponent("tone.mp3")
        try! TestMedia.run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", wav.path, "synth", "6", "sine", "523", "vol", "0.5"])
        try! TestMedia.run("/usr/bin/lame", ["--quiet", "-t", "-b", "128", wav.path, mp3.path])
        defer { try? FileManager.default.removeItem(at: directory) }
        return try! Data(contentsOf: mp3)
    }()

    static let interval = 8192

    /// Serves the stream endlessly; response `index` says titles `title(index, block)` and is cut
    /// after `cut(index)` audio bytes (nil: never); `refuse(index)`: answers 503 instead.
    static func radio(title: @escaping @Sendable (Int, Int) -> String, cut: @escaping @Sendable (Int) -> Int? = { _ in nil },
                      refuse: @escaping @Sendable (Int) -> Bool = { _ in false }) throws -> ScriptedHTTPServer {
        try radio(metadata: { index, block in "StreamTitle='\(title(index, block))';" }, cut: cut, refuse: refuse)
    }

    /// ``radio(title:cut:refuse:)`` with each metadata block's whole text given (before its NUL padding).
    static func radio(metadata: @escaping @Sendable (Int, Int) -> String, cut: @escaping @Sendable (Int) -> Int? = { _ in nil },
                      refuse: @escaping @Sendable (Int) -> Bool = { _ in false }) throws -> ScriptedHTTPServer {
        let responses = Atomic<Int>(0)
        let counter = UncheckedBox(responses)
        return try ScriptedHTTPServer { request, connection in
            let index = counter.value.add(1, ordering: .relaxed).oldValue
            if refuse(index) {
                connection.writeHead("503 Service Unavailable", [("Content-Length", "0")])
                return
            }
            guard request.header("Icy-MetaData") == "1" else {
                connection.writeHead("400 Bad Request", [("Content-Length", "0")])
                return
            }
            connection.writeHead("200 OK", [("Content-Type", "audio/mpeg"), ("icy-name", "Test Radio"), ("icy-metaint", "\(interval)")])
            var sent = 0
            var block = 0
            while connection.isOpen {
                let start = sent % audio.count
                let piece = audio.subdata(in: start..<min(audio.count, start + interval))
                var chunk = Data(piece.prefix(interval))
                if chunk.count < interval { chunk += audio.prefix(interval - chunk.count) }
                if let cut = cut(index), sent + interval > cut {
                    connection.write(chunk.prefix(cut - sent))
                    return
                }
                let text = Array(metadata(index, block).utf8)
                let padded = text + [UInt8](repeating: 0, count: (16 - text.count % 16) % 16)
                guard connection.write(chunk + Data([UInt8(padded.count / 16)]) + Data(padded)) else { return }
                sent += interval
                block += 1
            }
        }
    }

    @Test func nameAndTitlesAreTheStreams() async throws {
        let server = try Self.radio(title: { _, block in block < 6 ? "One" : "Two" })
        let playback = StreamPlayback([server.url("stream")])
        let item = playback.items[0]
        let titles = Recorder<String?>()
        let watch = item.observe(\.streamTitle, options: [.new]) { _, change in titles.append(change.newValue ?? nil) }
        #expect(playback.run { titles.all.contains("Two") })
        #expect(titles.all == ["One", "Two"])
        #expect(item.streamName == "Test Radio")
        #expect(item.isLive)
        #expect(item.duration == nil)
        // The title changed when its audio was reached: about six intervals of audio in.
        let heard = Double(playback.sink.capturedFrames) / 44_100
        let expected = Double(6 * Self.interval) / 16_000
        #expect(heard > expected - 1.5 && heard < expected + 2.5, "\(heard) s heard at the title change, its audio at \(expected) s")
        let done = Recorder<Bool>()
        playback.player.seek(to: MediaTime(seconds: 1)) { done.append($0) }
        #expect(done.all == [false], "a live stream has nothing to seek in")
        watch.invalidate()
        try await playback.shutdown()
    }

    /// mpd plays on through bad metadata, and so does the stream: a NUL in the title, a quote
    /// never closed and text after the last `';` each cost the bad part, with a warning, never the audio.
    @Test func malformedMetadataCostsTheTitleNotTheAudio() async throws {
        // Every fourth block says something (two seconds of audio apart), the others nothing.
        let said = ["StreamTitle='Before';", "StreamTitle='Bad\0Title';", "StreamTitle='Never closed",
                    "StreamTitle='Trailing';junk after it", "StreamTitle='After';"]
        let server = try Self.radio(metadata: { _, block in block % 4 == 0 ? said[min(block / 4, said.count - 1)] : "" })
        let log = RecordingLogHandler.Lines()
        var configuration = StreamPlayback.quick
        configuration.logger = log.logger()
        let playback = StreamPlayback([server.url("stream")], configuration: configuration)
        let item = playback.items[0]
        let titles = Recorder<String?>()
        let watch = item.observe(\.streamTitle, options: [.new]) { _, change in titles.append(change.newValue ?? nil) }
        #expect(playback.run { titles.all.contains("After") || item.status == .failed })
        #expect(item.status != .failed, "\(String(describing: item.error))")
        #expect(titles.all == ["Before", "Trailing", "After"])
        #expect(server.requests.count == 1, "one connection, never dropped")
        // Past the bad blocks' audio (sixteen intervals of half a second).
        #expect(Double(playback.sink.capturedFrames) / 44_100 > 7)
        let url = server.url("stream").absoluteString
        #expect(log.all.filter { $0.hasPrefix("warning:") }
                == ["warning: \(url): an ICY metadata block with a NUL in a value, left out; the audio plays on"], "\(log.all)")
        #expect(log.count(containing: "never closed, left out") == 1 && log.count(containing: "not key='value'; pairs, left out") == 1)
        watch.invalidate()
        try await playback.shutdown()
    }

    @Test func aDroppedStreamPlaysOnFromTheLiveEdge() async throws {
        let server = try Self.radio(title: { index, _ in "connection \(index)" }, cut: { $0 == 0 ? 40_000 : nil })
        let playback = StreamPlayback([server.url("stream")])
        let item = playback.items[0]
        // Much more than the first connection carried (40 kB is 2.5 s) is heard.
        #expect(playback.run { playback.sink.capturedFrames > 44_100 * 8 })
        #expect(server.requests.count == 2)
        #expect(item.status == .readyToPlay)
        #expect(playback.run { item.streamTitle == "connection 1" })
        try await playback.shutdown()
    }

    @Test func pausedLongerThanItsBufferItResumesAtTheLiveEdge() async throws {
        let server = try Self.radio(title: { index, _ in "connection \(index)" })
        let playback = StreamPlayback([server.url("stream")])
        let item = playback.items[0]
        #expect(playback.run { playback.player.timeControlStatus == .playing && item.streamTitle == "connection 0" })
        playback.player.pause()
        // The server fills the buffer (a minute of audio) and then stays ahead of it.
        #expect(waitUntil(timeout: 10) { item.isPlaybackBufferFull })
        let full = ChildProcess.now()
        // Longer than the buffer's audio may wait in it (MPG123StreamDecoder.staleAfter, 2 s).
        #expect(waitUntil(timeout: 10) { ChildProcess.now() - full > 3 })
        let heardBefore = playback.sink.capturedFrames
        playback.player.play()
        // Not the stale minute: a new connection at the live edge, heard within seconds.
        #expect(playback.run { server.requests.count == 2 && item.streamTitle == "connection 1" })
        let heardStale = Double(playback.sink.capturedFrames - heardBefore) / 44_100
        #expect(heardStale < 3, "\(heardStale) s of buffered audio played before the live edge")
        try await playback.shutdown()
    }

    @Test func aServerGoneForGoodFailsTheItemAfterTheRetryTime() async throws {
        let server = try Self.radio(title: { _, _ in "t" }, cut: { $0 == 0 ? 40_000 : nil }, refuse: { $0 > 0 })
        let playback = StreamPlayback([server.url("stream")])
        let item = playback.items[0]
        #expect(playback.runToEnd())
        #expect(item.status == .failed)
        #expect(item.error?.why.hasPrefix("HTTP 503 Service Unavailable; gave up after retrying for 3 s") == true, "\(String(describing: item.error))")
        #expect(server.requests.count >= 4, "retried: \(server.requests.count)")
        try await playback.shutdown()
    }
}

/// Hands a noncopyable atomic to a closure by reference. Owner: the atomic itself.
final class UncheckedBox: Sendable {
    let value: Atomic<Int>
    init(_ value: consuming Atomic<Int>) { self.value = value }
}
