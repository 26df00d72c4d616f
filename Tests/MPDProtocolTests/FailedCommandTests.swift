import MPDProtocol
import Testing

/// The commands a session answered with an ACK, which the connection logs at debug level (as
/// mpd logs the commands it runs): each line with its ACK, in order, whether the parser, the
/// session or the daemon refused it, in or out of a list; a `password`'s argument never kept.
@Suite struct FailedCommandTests {
    typealias Failed = ClientSession.FailedCommand

    @Test func eachACKIsKeptWithItsLineUntilTaken() {
        let client = TestClient()
        _ = client.feed("ping\nplay 99\nfrobnicate \"x\"\nsetvol\nstatus\n")
        #expect(client.session.takeFailedCommands() == [
            Failed(line: "play 99", ack: "ACK [2@0] {play} Bad song index"),
            Failed(line: "frobnicate \"x\"", ack: "ACK [5@0] {} unknown command \"frobnicate\""),
            Failed(line: "setvol", ack: "ACK [2@0] {setvol} wrong number of arguments for \"setvol\""),
        ])
        #expect(client.session.takeFailedCommands().isEmpty, "taken once")
        _ = client.feed("ping\nstatus\n")
        #expect(client.session.takeFailedCommands().isEmpty, "commands that work leave nothing")
    }

    @Test func aListKeepsTheCommandThatEndedIt() {
        let client = TestClient()
        #expect(client.feed("command_list_begin\nping\nnext\nplay\ncommand_list_end\n") == "ACK [55@1] {next} Not playing\n")
        #expect(client.session.takeFailedCommands() == [Failed(line: "next", ack: "ACK [55@1] {next} Not playing")])
    }

    @Test func aPasswordIsNeverKept() {
        let client = TestClient()
        let actions = client.receive("password hunter2\npassword \"two words\"\npassword\n") { command, _ throws(MPDError) in
            throw MPDError(.password, "incorrect password")
        }
        #expect(transcript(actions).contains("incorrect password"))
        let failed = client.session.takeFailedCommands()
        #expect(failed.map(\.line) == ["password ***", "password ***", "password"], "\(failed)")
        #expect(!failed.contains { $0.line.contains("hunter2") || $0.ack.contains("hunter2") || $0.line.contains("two words") })
    }

    @Test func aFatalACKIsKeptBeforeTheClose() {
        let client = TestClient()
        _ = client.feed("pla%y\n")
        #expect(client.isClosed)
        let failed = client.session.takeFailedCommands()
        #expect(failed.count == 1 && failed.first?.line == "pla%y" && failed.first?.ack.hasPrefix("ACK [") == true, "\(failed)")
    }
}
