import Logging
import Testing
import TestSupport
@testable import DaemonCore
@testable import MPDServer

/// `--max-clients` as one count over every listener (``ClientLimit``): the places are taken
/// and given back by whichever listener's clients, and a crowd refused is logged at most once
/// a second, with how many were refused since the last line.
@Suite struct ClientLimitTests {
    @Test func thePlacesAreSharedAndGivenBack() {
        let log = RecordingLogHandler.Lines()
        let limit = ClientLimit(maximum: 3, logger: log.logger())
        // A Unix client, an IPv4 one, an IPv6 one: one count.
        #expect((0..<3).allSatisfy { _ in limit.admit(now: 10) })
        #expect(limit.connected == 3)
        #expect(!limit.admit(now: 10))
        #expect(limit.connected == 3, "a refused client takes no place")
        limit.release()
        #expect(limit.connected == 2)
        #expect(limit.admit(now: 10.1), "a place given back is taken again")
        #expect(!limit.admit(now: 10.2))
    }

    /// TCP clients holding every place leave one for the Unix socket's (its owner's): one local
    /// client is admitted over the maximum while no other is connected; a crowd on the Unix
    /// socket itself still gets no more than the maximum.
    @Test func theUnixSocketKeepsAPlaceWhenTCPClientsHoldEveryOther() {
        let log = RecordingLogHandler.Lines()
        let limit = ClientLimit(maximum: 2, logger: log.logger())
        #expect(limit.admit(local: false, now: 0) && limit.admit(local: false, now: 0))
        #expect(!limit.admit(local: false, now: 0))
        #expect(limit.admit(local: true, now: 0), "the owner is served when TCP clients fill every place")
        #expect(limit.connected == 3)
        #expect(!limit.admit(local: true, now: 0), "one place over the maximum, not more")
        #expect(!limit.admit(local: false, now: 0))
        limit.release(local: true)
        #expect(limit.admit(local: true, now: 0), "the place is the Unix socket's again once given back")
        limit.release(local: true)
        limit.release(local: false)
        limit.release(local: false)
        #expect(limit.connected == 0)
        // Unix clients alone: the maximum, as before.
        #expect(limit.admit(local: true, now: 0) && limit.admit(local: true, now: 0))
        #expect(!limit.admit(local: true, now: 0))
        #expect(!limit.admit(local: false, now: 0))
    }

    @Test func refusalsAreLoggedAtMostOnceASecondWithTheirCount() {
        let log = RecordingLogHandler.Lines()
        let limit = ClientLimit(maximum: 1, logger: log.logger())
        #expect(limit.admit(now: 0))
        #expect(!limit.admit(now: 5))
        #expect(log.all == ["warning: 1 clients connected, the most allowed (--max-clients): refused 1 new client"])
        for now in [5.2, 5.5, 5.9] { #expect(!limit.admit(now: now)) }
        #expect(log.all.count == 1, "\(log.all)")
        #expect(!limit.admit(now: 6.0))
        #expect(log.all.last == "warning: 1 clients connected, the most allowed (--max-clients): refused 4 new clients", "\(log.all)")
        #expect(log.all.count == 2)
    }
}
