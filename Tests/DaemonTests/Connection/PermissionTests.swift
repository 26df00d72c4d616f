import Foundation
import Logging
import MPDProtocol
import NIOCore
import NIOEmbedded
import Testing
import TestSupport
@testable import DaemonCore
@testable import MPDServer

/// mpd's permissions on a control connection: a command the client may not use is
/// refused with mpd's words, `commands`/`notcommands` say what it may do, and `password`
/// replaces what it holds.
@Suite("ControlConnection permissions")
struct PermissionTests {
    typealias Fixture = ControlConnectionTests.Fixture

    /// A connected client holding `permissions`, the greeting read.
    func connect(_ fixture: Fixture, permissions: Permission, peer: String = "192.0.2.7",
                 isLocal: Bool = false) throws -> ControlConnectionTests.Client {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            ControlConnection(environment: fixture.environment,
                              logger: Logger(label: "test"), permissions: permissions, peer: peer, isLocal: isLocal))
        try channel.connect(to: SocketAddress(ipAddress: "192.0.2.7", port: 6600)).wait()
        let client = ControlConnectionTests.Client(channel: channel, scheduler: fixture.scheduler)
        #expect(try client.received() == ClientSession.greeting)
        return client
    }

    @Test func aReadOnlyClientIsRefusedWhatItMayNotDoInMPDsWords() throws {
        let fixture = try Fixture()
        let client = try connect(fixture, permissions: .read)
        try client.send("setvol 40\n")
        #expect(try client.settle() == "ACK [4@0] {setvol} you don't have permission for \"setvol\"\n")
        // Checked before the arguments, as mpd does.
        try client.send("setvol\n")
        #expect(try client.settle() == "ACK [4@0] {setvol} you don't have permission for \"setvol\"\n")
        try client.send("add \"x.mp3\"\n")
        #expect(try client.settle() == "ACK [4@0] {add} you don't have permission for \"add\"\n")
        try client.send("command_list_ok_begin\nstatus\nnext\nping\ncommand_list_end\n")
        let list = try client.settle()
        #expect(list.hasSuffix("list_OK\nACK [4@1] {next} you don't have permission for \"next\"\n"))
        // What it may do works, and unknown commands stay unknown.
        try client.send("ping\nstatus\n")
        let replies = try client.settle()
        #expect(replies.hasPrefix("OK\nvolume: ") && replies.hasSuffix("OK\n"))
        try client.send("frobnicate\n")
        #expect(try client.settle() == "ACK [5@0] {} unknown command \"frobnicate\"\n")
    }

    /// `config` tells where the music is on this machine: mpd answers it on a Unix socket
    /// only, whatever the client's permissions; elsewhere the permission is checked first.
    @Test func configAnswersOnlyALocalClient() throws {
        let fixture = try Fixture()
        let remote = try connect(fixture, permissions: .all)
        try remote.send("config\n")
        #expect(try remote.settle() == "ACK [4@0] {config} Command only permitted to local clients\n")
        try remote.send("command_list_ok_begin\nping\nconfig\ncommand_list_end\n")
        #expect(try remote.settle() == "list_OK\nACK [4@1] {config} Command only permitted to local clients\n")
        let readOnly = try connect(fixture, permissions: .read)
        try readOnly.send("config\n")
        #expect(try readOnly.settle() == "ACK [4@0] {config} you don't have permission for \"config\"\n")
        let local = try connect(fixture, permissions: .all, peer: "local", isLocal: true)
        try local.send("config\n")
        let reply = try local.settle()
        #expect(reply.hasPrefix("music_directory: /") && reply.hasSuffix("\nOK\n"), "\(reply)")
    }

    /// An absolute path names a local file: `readpicture` refuses it to a client that is not on
    /// the Unix socket, even inside the music directory, as `albumart` and mpd 0.23 do (the
    /// answer would tell a remote client where the music directory is); a local client and a
    /// path relative to the music directory are served.
    @Test func readpictureRefusesAnAbsolutePathToARemoteClient() throws {
        let fixture = try Fixture()
        let song = fixture.directory.appendingPathComponent("song.mp3")
        try FileManager.default.copyItem(at: TestMedia.all[0], to: song)
        let remote = try connect(fixture, permissions: .all)
        for uri in [song.path, fixture.directory.path + "/", "/etc/passwd"] {
            try remote.send("readpicture \"\(uri)\" 0\n")
            #expect(try remote.settle() == "ACK [4@0] {readpicture} Access denied\n", "\(uri)")
        }
        try remote.send("readpicture song.mp3 0\n")
        #expect(try remote.settle() == "OK\n", "no embedded picture: an empty reply")
        let local = try connect(fixture, permissions: .all, peer: "local", isLocal: true)
        try local.send("readpicture \"\(song.path)\" 0\n")
        #expect(try local.settle() == "OK\n")
    }

    @Test func commandsAndNotcommandsSplitTheTableByPermission() throws {
        let fixture = try Fixture()
        let client = try connect(fixture, permissions: .read)
        try client.send("commands\n")
        let allowed = Set(try client.settle().split(separator: "\n").filter { $0.hasPrefix("command: ") }.map { $0.dropFirst(9) })
        try client.send("notcommands\n")
        let refused = Set(try client.settle().split(separator: "\n").filter { $0.hasPrefix("command: ") }.map { $0.dropFirst(9) })
        #expect(allowed.contains("status") && allowed.contains("password") && allowed.contains("idle"))
        #expect(!allowed.contains("setvol") && refused.contains("setvol") && refused.contains("add"))
        #expect(allowed.isDisjoint(with: refused))
        #expect(allowed.union(refused) == Set(Command.supportedNames.map { Substring($0) }))
        // With every permission nothing is refused.
        let full = try connect(fixture, permissions: .all)
        try full.send("notcommands\n")
        #expect(try full.settle() == "OK\n")
    }

    @Test func aPasswordReplacesThePermissionsAndAWrongOneIsRefused() throws {
        let fixture = try Fixture(access: AccessPolicy(passwords: [.init(secret: Array("s3cret".utf8), permissions: [.read, .player]),
                                                    .init(secret: Array("all".utf8), permissions: .all)],
                                        defaultPermissions: nil, localPermissions: nil, logger: Logger(label: "test")))
        let client = try connect(fixture, permissions: [])
        try client.send("status\n")
        #expect(try client.settle() == "ACK [4@0] {status} you don't have permission for \"status\"\n")
        try client.send("password wrong\n")
        #expect(try client.settle() == "ACK [3@0] {password} incorrect password\n")
        try client.send("password s3cret\nsetvol 30\nadd \"x.mp3\"\n")
        #expect(try client.settle() == "OK\nOK\nACK [4@0] {add} you don't have permission for \"add\"\n")
        // Inside a list, the permissions change for the commands after the password.
        try client.send("command_list_begin\npassword all\nupdate\ncommand_list_end\n")
        let list = try client.settle()
        #expect(list.hasPrefix("updating_db: ") && list.hasSuffix("OK\n"))
    }

    /// A guesser on loopback (every local user is 127.0.0.1) cannot lock the owner out: past
    /// the free failures the answer to its wrong password comes only once the loop's clock has
    /// moved on by the wait, its next commands wait behind it (a pipelined batch gets one guess
    /// per wait), and meanwhile the owner's right password, from the same address, is accepted
    /// at once.
    @Test func aGuessersWrongAnswersAreHeldBackAndTheOwnersRightPasswordIsAcceptedAtOnce() throws {
        let fixture = try Fixture(access: AccessPolicy(passwords: [.init(secret: Array("s3cret".utf8), permissions: .all)],
                                        defaultPermissions: nil, localPermissions: nil, logger: Logger(label: "test")))
        let refused = "ACK [3@0] {password} incorrect password\n"
        let guesser = try connect(fixture, permissions: [], peer: "127.0.0.1")
        let owner = try connect(fixture, permissions: [], peer: "127.0.0.1")
        let clock = guesser.channel.embeddedEventLoop
        for attempt in 0..<AccessPolicy.freeFailures {
            try guesser.send("password guess\(attempt)\n")
            #expect(try guesser.settle() == refused, "free failure \(attempt + 1)")
        }
        try guesser.send("password guess\nping\n")
        #expect(try guesser.settle() == "")
        try owner.send("password s3cret\nping\n")
        #expect(try owner.settle() == "OK\nOK\n", "the owner is answered while the guesser waits")
        clock.advanceTime(by: .milliseconds(999))
        #expect(try guesser.settle() == "")
        clock.advanceTime(by: .milliseconds(1))
        #expect(try guesser.settle() == refused + "OK\n")
        // Pipelined guesses: one answer per wait (2 s, then 4 s), not a batch of them.
        try guesser.send("password a\npassword b\npassword s3cret\nping\n")
        #expect(try guesser.settle() == "")
        clock.advanceTime(by: .milliseconds(2_000))
        #expect(try guesser.settle() == refused)
        clock.advanceTime(by: .milliseconds(3_999))
        #expect(try guesser.settle() == "")
        // After its held answers, the right password: accepted with no wait of its own.
        clock.advanceTime(by: .milliseconds(1))
        #expect(try guesser.settle() == refused + "OK\nOK\n")

        // A guesser that sends and shuts its side (while its password is checked, or while the
        // answer is held) is closed at once: it keeps no place of --max-clients for the wait.
        for (index, endsWhileChecked) in [true, false].enumerated() {
            let leaver = try connect(fixture, permissions: [], peer: "192.0.2.\(20 + index)")
            for _ in 0..<AccessPolicy.freeFailures {
                try leaver.send("password guess\n")
                #expect(try leaver.settle() == refused)
            }
            try leaver.send("password guess\n")
            if endsWhileChecked { leaver.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
            #expect(try leaver.settle() == "")
            if !endsWhileChecked {
                #expect(leaver.channel.isActive, "held")
                leaver.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            }
            #expect(!leaver.channel.isActive, "ends while checked: \(endsWhileChecked)")
        }
    }

    /// The requests of mpd 0.23.12's transcript (`Tests/IntegrationTests/Transcripts/50-raw-password-permissions.txt`,
    /// same passwords) get the same `ACK`, `command:` and `list_OK` lines here; `status` bodies differ
    /// (mpd's has no mixer) and are not compared.
    @Test func theRepliesAreMPDsForTheTranscriptsRequests() throws {
        let fixture = try Fixture(access: AccessPolicy(passwords: [.init(secret: Array("reader".utf8), permissions: .read),
                                                    .init(secret: Array("s3cret".utf8), permissions: .all)],
                                        defaultPermissions: nil, localPermissions: nil, logger: Logger(label: "test")))
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("IntegrationTests/Transcripts/50-raw-password-permissions.txt")
        let text = try String(contentsOf: file, encoding: .utf8)
        let client = try connect(fixture, permissions: [])
        var exchanges: [(request: String, expected: [String])] = []
        for line in text.split(separator: "\n") {
            if let range = line.range(of: "] -> b'") {
                let request = line[range.upperBound...].dropLast().replacingOccurrences(of: "\\n", with: "\n")
                exchanges.append((request, []))
            } else if let range = line.range(of: "] <- "), !exchanges.isEmpty {
                exchanges[exchanges.count - 1].expected.append(String(line[range.upperBound...]))
            }
        }
        #expect(exchanges.count == 14)
        for (request, expected) in exchanges where !request.hasPrefix("setvol 40") || expected.first?.hasPrefix("ACK [4") == true {
            try client.send(request)
            let answered = try client.settle().split(separator: "\n").map(String.init)
            let kept: (String) -> Bool = { $0.hasPrefix("ACK ") || $0.hasPrefix("command: ") || $0 == "list_OK" || $0 == "OK" }
            let ours = answered.filter(kept), theirs = expected.filter(kept)
            if request.hasPrefix("notcommands") || request.hasPrefix("commands") {
                // mpd's table has commands this daemon does not implement: ours are a subset, but
                // for the daemon's own (location, not in mpd), left out of the comparison.
                let own = Set(Command.namesNotInMPD
                    .map { "command: \($0)" })
                #expect(Set(ours).subtracting(own).isSubset(of: Set(theirs)), "\(request)")
                #expect(ours.last == "OK")
            } else {
                #expect(ours == theirs, "\(request)")
            }
        }
    }
}
