import Logging
import NIOCore
import NIOEmbedded
import Testing
import TestSupport
@testable import DaemonCore
@testable import MPDServer

/// mpd's `connection_timeout` on a control connection, on the `EmbeddedEventLoop`'s own clock
/// (a 1 s timeout; time moves only when the test says): a client that sends no complete line
/// for that long is closed, whatever bytes it trickles; each line restarts the time; a client
/// waiting in `idle`, or whose command runs off the loop, is not silent.
@Suite("ControlConnection: the connection timeout")
struct ConnectionTimeoutTests {
    typealias Fixture = ControlConnectionTests.Fixture

    private func advance(_ client: ControlConnectionTests.Client, milliseconds: Int64) {
        client.channel.embeddedEventLoop.advanceTime(by: .milliseconds(milliseconds))
    }

    /// The client is still connected 1 ms before `milliseconds` from now, and closed at it.
    private func expectClosed(_ client: ControlConnectionTests.Client, after milliseconds: Int64,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        advance(client, milliseconds: milliseconds - 1)
        #expect(client.channel.isActive, "1 ms before the timeout", sourceLocation: sourceLocation)
        advance(client, milliseconds: 1)
        #expect(!client.channel.isActive, "at the timeout", sourceLocation: sourceLocation)
    }

    @Test func aSilentClientIsClosedAfterTheTimeout() throws {
        let fixture = try Fixture()
        let client = try fixture.connect(timeout: 1)
        expectClosed(client, after: 1_000)
        #expect(try client.received() == "", "closed without a word, as mpd does")
    }

    @Test func bytesThatNeverMakeALineDoNotKeepAClientConnected() throws {
        let fixture = try Fixture()
        let client = try fixture.connect(timeout: 1)
        for byte in "pin" {
            advance(client, milliseconds: 300)
            try client.send(String(byte))
            #expect(try client.settle() == "")
        }
        #expect(client.channel.isActive)
        advance(client, milliseconds: 100)
        #expect(!client.channel.isActive, "1 s after the greeting, whatever bytes came since")
    }

    @Test func eachCommandRestartsTheTime() throws {
        let fixture = try Fixture()
        let client = try fixture.connect(timeout: 1)
        // Answered on the loop, and lent to the partition: each restarts it.
        for command in ["ping", "setvol 20", "ping", "status", "ping"] {
            advance(client, milliseconds: 700)
            try client.send(command + "\n")
            #expect(try client.settle().hasSuffix("OK\n"), "\(command)")
            #expect(client.channel.isActive, "\(command)")
        }
        // A line that ends after a long trickle counts when it ends.
        try client.send("pi")
        advance(client, milliseconds: 700)
        try client.send("ng\n")
        #expect(try client.settle() == "OK\n")
        expectClosed(client, after: 1_000)
    }

    @Test func aClientInIdleIsNotTimedOutAndItsTimeRestartsWhenTheIdleEnds() throws {
        let fixture = try Fixture()
        let idler = try fixture.connect(timeout: 1)
        let other = try fixture.connect(timeout: 100)
        try idler.send("idle mixer\n")
        #expect(try idler.settle() == "")
        advance(idler, milliseconds: 5_000)
        #expect(idler.channel.isActive, "5 s in idle")
        // An event ends the idle: the time starts from there.
        try other.send("setvol 30\n")
        #expect(try other.settle() == "OK\n")
        #expect(try idler.settle() == "changed: mixer\nOK\n")
        advance(idler, milliseconds: 999)
        #expect(idler.channel.isActive)
        try idler.send("idle\n")
        advance(idler, milliseconds: 3_000)
        try idler.send("noidle\n")
        #expect(try idler.settle() == "OK\n")
        expectClosed(idler, after: 1_000)
    }

    @Test func aClientWhoseCommandRunsOffTheLoopIsNotTimedOut() throws {
        let fixture = try Fixture()
        let client = try fixture.connect(timeout: 1)
        try client.send("setvol 40\n")
        // The command waits in the scheduler (a long `update`, a busy partition).
        advance(client, milliseconds: 3_000)
        #expect(client.channel.isActive)
        #expect(try client.settle() == "OK\n")
        expectClosed(client, after: 1_000)
    }
}
