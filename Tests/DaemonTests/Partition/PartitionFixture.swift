import Foundation
import Logging
import MPDProtocol
import QueuePlayer
import Stickers
import TestSupport
@testable import DaemonCore

/// A real partition and player in the test process, on a null sink paced by a virtual clock,
/// with a scratch state directory: what a command or a hand-over does, without a daemon process.
final class PartitionFixture {
    let clock = VirtualClock()
    let parts: DaemonParts
    let directory: URL
    /// The sticker database of a fixture made with `memory`.
    let stickers: StickerStore?
    var partition: Partition { parts.partition }

    /// `sink` makes the player's output on the fixture's clock (a null sink by default);
    /// `decoders` opens its items. With `memory`, the partition remembers the items heard in a
    /// sticker database of the scratch directory (``stickers``), whose files are the library.
    init(sink: (VirtualClock) -> any AudioSink = { NullAudioSink(clock: $0) },
         decoders: any DecoderFactory = MPG123DecoderFactory(), memory: PlaybackMemory.Options? = nil) throws {
        directory = try TestMedia.scratchDirectory()
        let queue = DispatchQueue(label: "test.partition")
        let player = QueuePlayer(sink: sink(clock), decoderFactory: decoders)
        stickers = memory == nil ? nil : try StickerStore(file: directory.appendingPathComponent("sticker.sql"))
        parts = DaemonParts(player: player, library: MusicLibrary(root: memory == nil ? TestMedia.directory : directory),
                            stateDirectory: directory, stickers: stickers.map { .open($0) } ?? .off, memory: memory,
                            queue: queue)
    }


    deinit { try? FileManager.default.removeItem(at: directory) }

    var player: QueuePlayer { partition.player }

    /// One command line through a session, run on the partition's queue; the reply's text.
    func send(_ line: String) async -> String {
        let commands = parts.commands
        return await partition.run { _ in
            var session = ClientSession()
            return session.receive(Array((line + "\n").utf8), executor: commands).map { action in
                if case .send(let text) = action { return text }
                return ""
            }.joined()
        }
    }

    /// The value of `key` in the reply to `command` (`status`, `stats`...).
    func value(of key: String, in command: String) async -> String? {
        let reply = await send(command)
        return reply.split(separator: "\n").first { $0.hasPrefix("\(key): ") }.map { String($0.dropFirst(key.count + 2)) }
    }

    /// Waits (without moving time) until the player is in `status`.
    func waitFor(_ status: QueuePlayer.TimeControlStatus) -> Bool {
        waitUntil(timeout: 10) { player.timeControlStatus == status }
    }

    /// Runs `body` on the partition's queue, then holds the queue until the returned gate is
    /// signalled: the partition falls behind the player, as it does on a busy machine, from the
    /// moment `body` returns (nothing the player reports in between is taken in).
    func holdPartition(after body: @escaping @Sendable (Partition) -> Void = { _ in }) -> DispatchSemaphore {
        let gate = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        partition.perform { partition in
            body(partition)
            held.signal()
            gate.wait()
        }
        held.wait()
        return gate
    }

    /// Closes the player, paused first: a virtual clock that no longer moves would never let
    /// what was written play out.
    func close() async {
        await partition.run { partition in
            partition.player.pause()
            partition.player.close()
        }
    }
}
