@testable import DaemonCore
@testable import WebAPI
import FeedFetch
import Foundation
import Location
import Testing

/// The `download`, `downloads` and location events (docs/websocket.md): what changed is sent,
/// nothing else; a connecting client gets everything.
@Suite struct DownloadListTests {
    static func progress(_ number: Int, _ received: Int64, _ state: TransferProgress.State = .downloading) -> TransferProgress {
        TransferProgress(number: number, title: "E\(number)", feedTitle: "F", relativePath: "Podcasts/F/E\(number).mp3",
                         received: received, expected: 1_000, state: state)
    }

    static func snapshot(_ downloads: [TransferProgress], active: Int, queued: Int = 0) -> TransferProgressBoard.Snapshot {
        var snapshot = TransferProgressBoard.Snapshot()
        snapshot.downloads = downloads
        snapshot.active = active
        snapshot.queued = queued
        return snapshot
    }

    @Test func onlyWhatChangedIsSent() {
        var list = DownloadList()
        var events = list.update(to: Self.snapshot([Self.progress(1, 10), Self.progress(2, 0, .queued)], active: 1, queued: 1))
        #expect(events.map(\.encoded) == [
            #"{"event":"downloads","active":1,"waiting":0,"queued":1}"#,
            #"{"event":"download","download":1,"title":"E1","feed":"F","path":"Podcasts/F/E1.mp3","state":"downloading","received":10,"expected":1000}"#,
            #"{"event":"download","download":2,"title":"E2","feed":"F","path":"Podcasts/F/E2.mp3","state":"queued","received":0,"expected":1000}"#,
        ])
        #expect(list.update(to: Self.snapshot([Self.progress(1, 10), Self.progress(2, 0, .queued)], active: 1, queued: 1)).isEmpty)
        events = list.update(to: Self.snapshot([Self.progress(1, 500), Self.progress(2, 0, .queued)], active: 1, queued: 1))
        #expect(events.map(\.encoded) == [
            #"{"event":"download","download":1,"title":"E1","feed":"F","path":"Podcasts/F/E1.mp3","state":"downloading","received":500,"expected":1000}"#,
        ])
        events = list.update(to: Self.snapshot([Self.progress(2, 0, .waiting("HTTP 503"))], active: 0))
        #expect(events.map(\.encoded) == [
            #"{"event":"downloads","active":0,"waiting":0,"queued":0}"#,
            #"{"event":"download","download":1,"state":"removed"}"#,
            #"{"event":"download","download":2,"title":"E2","feed":"F","path":"Podcasts/F/E2.mp3","state":"waiting","received":0,"expected":1000,"error":"HTTP 503"}"#,
        ])
        #expect(list.current.count == 2 && list.current.first?.encoded == #"{"event":"downloads","active":0,"waiting":0,"queued":0}"#)
    }

    @Test func aFixAndTheHistory() {
        let fix = Location(coordinate: Coordinate(latitude: 48.8566, longitude: 2.3522), altitude: 35, horizontalAccuracy: 9.5,
                           speed: 10, course: -1, timestamp: Date(timeIntervalSince1970: 1_795_773_913.25), fix: .twoDimensional)
        #expect(LocationEvents.event(fix).encoded
                == #"{"event":"location","latitude":48.8566,"longitude":2.3522,"accuracy":9.5,"altitude":null,"speed":10,"course":null,"time":"2026-11-27T10:05:13Z","timestamp":1795773913.25}"#)
        #expect(LocationEvents.history([fix, fix]).encoded.hasPrefix(#"{"event":"locations","fixes":[{"latitude":48.8566,"#))
        #expect(LocationEvents.region("Stop A", entered: false).encoded == #"{"event":"region","region":"Stop A","state":"exit"}"#)
    }
}
