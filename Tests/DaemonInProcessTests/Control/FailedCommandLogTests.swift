import DaemonCore
import Foundation
import TestSupport
import Testing

/// Each command answered with an ACK is logged at debug level with its ACK, as mpd logs the
/// commands it runs; a password never is.
@Suite struct FailedCommandLogTests {
    @Test func eachFailedCommandIsLoggedWithItsACKAndNoPassword() throws {
        let daemon = try InProcessDaemon(environment: ["QUEUEPLAYERD_LOG_LEVEL": "debug"]) {
            $0.musicDirectory = TestMedia.directory.path
            $0.noState = true
            $0.passwords = [try PasswordSetting.parse("hunter2@read,add,player,control,admin")]
        }
        defer { daemon.stop() }
        let client = try daemon.client()
        #expect(try client.request("password \"wrong guess\"") == ["ACK [3@0] {password} incorrect password"])
        #expect(try client.request("password hunter2") == ["OK"])
        #expect(try client.request("albumart \"No Such Folder/\" 0") == ["ACK [50@0] {albumart} No file exists"])
        #expect(try client.request("command_list_begin\nping\nplay 99\ncommand_list_end") == ["ACK [2@1] {play} Bad song index"])
        #expect(try client.request("status").last == "OK")

        let expected = [
            "command \"password ***\" failed: ACK [3@0] {password} incorrect password",
            // The line as sent, quotes and all (mpd logs it so too).
            "command \"albumart \"No Such Folder/\" 0\" failed: ACK [50@0] {albumart} No file exists",
            "command \"play 99\" failed: ACK [2@1] {play} Bad song index",
        ]
        #expect(waitUntil(timeout: 5) { expected.allSatisfy(daemon.standardError.contains) },
                "\(daemon.standardError)")
        let log = daemon.standardError
        #expect(log.split(separator: "\n").filter { $0.contains(" failed: ACK ") }.count == 3, "\(log)")
        #expect(log.split(separator: "\n").contains { $0.contains("debug") && $0.contains("{albumart} No file exists") })
        #expect(!log.contains("hunter2") && !log.contains("wrong guess"), "\(log)")
    }
}
