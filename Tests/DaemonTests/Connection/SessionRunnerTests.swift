import Foundation
import Logging
import MPDProtocol
import NIOCore
import NIOPosix
import QueuePlayer
import Testing
@testable import DaemonCore

/// The one ``SessionRunner`` the control socket and the WebSocket lend their sessions to, alone:
/// a real partition and the daemon's scheduler, the result awaited as the WebSocket awaits it.
@Suite("SessionRunner")
struct SessionRunnerTests {
    final class Fixture {
        let directory: URL
        let parts: DaemonParts
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let runner: SessionRunner

        init(access: AccessPolicy = .open) throws {
            directory = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                                    appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()), create: true)
            parts = DaemonParts(player: QueuePlayer(sink: NullAudioSink()), library: MusicLibrary(root: directory),
                                stateDirectory: directory, access: access)
            let partition = parts.partition
            runner = SessionRunner(executor: parts.commands,
                                   scheduler: PartitionScheduler(queue: partition.queue, gate: ExpensiveCommandGate(queue: partition.queue)),
                                   remotePlaylists: parts.instance.remotePlaylists, access: parts.instance.access)
        }

        deinit {
            try? group.syncShutdownGracefully()
            try? FileManager.default.removeItem(at: directory)
        }

        /// Sends `text` through a session and lends it at each ready step, as the WebSocket does;
        /// the text of the replies, and how many lends it took.
        func run(_ text: String, session: inout ClientSession) async -> (text: String, lends: Int, delays: [Double]) {
            session.append(Array(text.utf8))
            var (replies, lends, delays) = ("", 0, [Double]())
            steps: while true {
                switch session.step() {
                case .needsInput:
                    break steps
                case .handled(let actions):
                    replies += Self.text(actions)
                case .ready(let needsExecutor):
                    let back = await runner.lend(session, needsExecutor: needsExecutor, on: group.next())
                    lends += 1
                    if let delay = back.delay { delays.append(delay) }
                    session = back.session
                    replies += Self.text(back.actions)
                }
            }
            return (replies, lends, delays)
        }

        static func text(_ actions: [SessionAction]) -> String {
            actions.map { if case .send(let text) = $0 { text } else { "" } }.joined()
        }

        func close() async {
            await parts.partition.run { $0.player.close() }
        }
    }

    @Test func cheapPipelinedCommandsRunInOneLendAndAnswerInOrder() async throws {
        let fixture = try Fixture()
        var session = ClientSession()
        let (text, lends, _) = await fixture.run("setvol 40\ngetvol\nrepeat 1\nstatus\n", session: &session)
        #expect(lends == 1)
        #expect(text.hasPrefix("OK\nvolume: 40\nOK\nOK\nvolume: 40\nrepeat: 1\n"), "\(text)")
        #expect(text.hasSuffix("OK\n"))
        await fixture.close()
    }

    @Test func anExpensiveCommandIsLentAloneAfterTheCheapOnes() async throws {
        let fixture = try Fixture()
        var session = ClientSession()
        let (text, lends, _) = await fixture.run("getvol\nlistall\ngetvol\n", session: &session)
        // The cheap one, then `listall` through the gate, then the last one.
        #expect(lends == 3)
        #expect(text == "volume: 100\nOK\nOK\nvolume: 100\nOK\n")
        await fixture.close()
    }

    @Test func aListOfProtocolLevelCommandsRunsOffThePartitionAndAnswers() async throws {
        let fixture = try Fixture()
        var session = ClientSession()
        let (text, lends, _) = await fixture.run("command_list_ok_begin\nping\nping\ncommand_list_end\n", session: &session)
        #expect(lends == 1)
        #expect(text == "list_OK\nlist_OK\nOK\n")
        await fixture.close()
    }

    @Test func aWrongPasswordPastTheFreeFailuresComesBackWithItsWait() async throws {
        let policy = AccessPolicy(passwords: [.init(secret: Array("s3cret".utf8), permissions: .all)],
                                  defaultPermissions: nil, localPermissions: nil, logger: Logger(label: "test"))
        let fixture = try Fixture(access: policy)
        var session = ClientSession()
        session.peer = "192.0.2.9"
        var delays: [Double] = []
        for _ in 0..<(AccessPolicy.freeFailures + 1) {
            let (text, _, waits) = await fixture.run("password wrong\n", session: &session)
            #expect(text == "ACK [3@0] {password} incorrect password\n")
            delays += waits
        }
        #expect(delays.count == 1 && delays[0] > 0, "\(delays)")
        await fixture.close()
    }
}
