import MPDProtocol
import Testing

/// `rate`, `pitchalgorithm`, `skipsilence`: the table types `skipsilence`'s boolean as mpd's
/// `repeat`; the rate's range and the algorithm's names are the daemon's to check.
@Suite struct PaceCommandParsingTests {
    @Test func theRowsParseTheirArguments() throws {
        #expect(try parse("rate 1.5").get() == .rate("1.5"))
        #expect(try parse("pitchalgorithm varispeed").get() == .pitchalgorithm("varispeed"))
        #expect(try parse("skipsilence 1").get() == .skipsilence(true))
        #expect(try parse("skipsilence 0").get() == .skipsilence(false))
        #expect(ack("skipsilence 2") == "ACK [2@0] {skipsilence} Boolean (0/1) expected: 2\n")
        #expect(ack("rate") == "ACK [2@0] {rate} wrong number of arguments for \"rate\"\n")
        #expect(ack("rate 1 2") == "ACK [2@0] {rate} wrong number of arguments for \"rate\"\n")
        #expect(Permission.required(forCommandNamed: "rate") == .player)
    }
}
