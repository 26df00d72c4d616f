import Testing
@testable import DaemonCore
@testable import Zeroconf

/// What `_mpd._tcp` announces: which listener's port, where, and under what name.
@Suite struct ZeroconfServiceTests {
    @Test func theFirstListenerOtherMachinesReachIsAnnouncedElseTheFirstToThisMachineOnly() {
        let remote = ZeroconfService(name: "n", listeners: [(6600, true), (6601, false), (6602, false)])
        #expect(remote == ZeroconfService(name: "n", listeners: [(6601, false)]))
        #expect(remote?.port == 6601 && remote?.isLoopbackOnly == false)
        let local = ZeroconfService(name: "n", listeners: [(6600, true), (6610, true)])
        #expect(local?.port == 6600 && local?.isLoopbackOnly == true)
        #expect(ZeroconfService(name: "n", listeners: []) == nil, "a Unix socket only: nothing to announce")
    }

    @Test func percentHIsTheHostNameAndANameFitsADNSLabel() {
        #expect(ZeroconfService.name(from: ZeroconfService.defaultName, hostName: "box") == "queueplayerd @ box")
        #expect(ZeroconfService.name(from: "%h: %h", hostName: "box") == "box: %h", "mpd replaces the first only")
        #expect(ZeroconfService.name(from: "Living room", hostName: "box") == "Living room")
        let long = ZeroconfService.name(from: String(repeating: "é", count: 40), hostName: "box")
        #expect(long.utf8.count == 62 && long.allSatisfy { $0 == "é" }, "cut at a character, within 63 bytes")
        #expect(!ZeroconfService.hostName().isEmpty)
    }
}
