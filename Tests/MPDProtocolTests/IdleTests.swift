import MPDProtocol
import Testing

@Suite struct IdleTests {
    @Test func eventsArePendingFromConnect() {
        let session = TestClient()
        #expect(session.changed(.player) == "")
        #expect(session.feed("idle\n") == "changed: player\nOK\n")
        #expect(!session.isIdle)
    }

    @Test func idleWaitsThenWakesOnAnEvent() {
        let session = TestClient()
        #expect(session.feed("idle\n") == "")
        #expect(session.isIdle)
        #expect(session.changed(.player) == "changed: player\nOK\n")
        #expect(!session.isIdle)
        // The idle is over: a further event is only recorded.
        #expect(session.changed(.mixer) == "")
        #expect(session.feed("idle\n") == "changed: mixer\nOK\n")
    }

    @Test func eventsCollapseAndComeInMPDsOrder() {
        let session = TestClient()
        _ = session.changed(.player)
        _ = session.changed(.playlist)
        _ = session.changed(.mixer)
        _ = session.changed(.player)
        #expect(session.feed("idle\n") == "changed: playlist\nchanged: player\nchanged: mixer\nOK\n")
        _ = session.changed(.update)
        _ = session.changed(.database, .update)
        #expect(session.feed("idle\n") == "changed: database\nchanged: update\nOK\n")
        #expect(session.changed(.output, .mixer) == "")
        #expect(session.feed("idle\n") == "changed: mixer\nchanged: output\nOK\n")
    }

    @Test func ownCommandsProduceEventsToo() {
        // next, then idle: the daemon reports the change to every session, this one included.
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        daemon.isPlaying = true
        #expect(session.feed("next\n", daemon) == "OK\n")
        _ = session.changed(.player)
        #expect(session.feed("idle\n") == "changed: player\nOK\n")
    }

    @Test func noidleWhileIdlingWithNothingToReport() {
        let session = TestClient()
        #expect(session.feed("idle\n") == "")
        #expect(session.feed("noidle\n") == "OK\n")
        #expect(!session.isIdle)
    }

    @Test func noidleWhenNotIdlingIsIgnoredSilently() {
        let session = TestClient()
        #expect(session.feed("noidle\n") == "")
        #expect(session.feed("ping\n") == "OK\n")
        // After the idle reply was sent, a racing noidle gets nothing (python-mpd2 asyncio).
        #expect(session.feed("idle\n") == "")
        #expect(session.changed(.player) == "changed: player\nOK\n")
        let daemon = FakeDaemon()
        #expect(session.feed("noidle\nstop\n", daemon) == "OK\n")
        #expect(daemon.executed == [.stop])
    }

    @Test func pipelinedIdleAndNoidle() {
        let session = TestClient()
        #expect(session.feed("idle \"database\"\nnoidle\nping\n") == "OK\nOK\n")
    }

    @Test func anyOtherCommandWhileIdlingCloses() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        #expect(session.feed("idle\n") == "")
        #expect(session.feed("status\n") == "<close>")
        #expect(daemon.executed.isEmpty)
        #expect(session.isClosed)
        #expect(session.changed(.player) == "")
        #expect(session.feed("ping\n") == "")
    }

    @Test func filteredEventsStayPendingAcrossNoidle() {
        // 36-raw-idle-filter.txt, first part.
        let session = TestClient()
        #expect(session.feed("idle playlist\n") == "")
        #expect(session.changed(.player) == "")
        #expect(session.isIdle)
        #expect(session.feed("noidle\n") == "OK\n")
        #expect(session.feed("idle\n") == "changed: player\nOK\n")
    }

    @Test func aSubscribedEventClearsAllPendingEvents() {
        // 36-raw-idle-filter.txt, second part: next then add during `idle playlist`.
        let session = TestClient()
        #expect(session.feed("idle playlist\n") == "")
        #expect(session.changed(.player) == "")
        #expect(session.changed(.playlist) == "changed: playlist\nOK\n")
        #expect(session.feed("idle\n") == "")
        #expect(session.session.idleState.pending.isEmpty)
        #expect(session.feed("noidle\n") == "OK\n")
    }

    @Test func filteredIdleReturnsAtOnceOnlyForSubscribedPendingEvents() {
        let session = TestClient()
        _ = session.changed(.player, .mixer)
        #expect(session.feed("idle mixer\n") == "changed: mixer\nOK\n")
        // The player event was cleared along with mixer.
        #expect(session.feed("idle player\n") == "")
        #expect(session.changed(.mixer) == "")
        #expect(session.changed(.player) == "changed: player\nOK\n")
    }

    @Test func subsystemNamesAreCaseInsensitive() {
        let session = TestClient()
        #expect(session.feed("idle PLAYER\n") == "")
        #expect(session.changed(.player) == "changed: player\nOK\n")
    }

    @Test func rejectedIdleDoesNotIdle() {
        let session = TestClient()
        #expect(session.feed("idle queue\n") == "ACK [2@0] {idle} Unrecognized idle event: queue\n")
        #expect(!session.isIdle)
        #expect(session.feed("noidle\n") == "")
        #expect(session.feed("ping\n") == "OK\n")
    }

    @Test func idleStateDirectly() {
        var state = IdleState()
        #expect(state.record([.player]) == nil)
        #expect(state.wait(for: [.mixer]) == nil)
        #expect(state.isWaiting)
        #expect(state.subscription == [.mixer])
        let wasWaiting = state.cancelWait()
        let wasStillWaiting = state.cancelWait()
        #expect(wasWaiting)
        #expect(!wasStillWaiting)
        #expect(state.pending == [.player])
        #expect(state.wait(for: []) == [.player])
        #expect(state.pending.isEmpty)
        #expect(IdleState.reply(reporting: [.database, .update]) == "changed: database\nchanged: update\nOK\n")
        #expect(IdleState.reply(reporting: []) == "OK\n")
    }
}
