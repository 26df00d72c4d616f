import FeedFetch

/// The downloads as the web clients were last told of them, and the events that bring them up
/// to date with a new ``TransferProgressBoard/Snapshot`` (pure: `DownloadListTests`).
///
/// Events: `downloads` with the counts when they change; `download` for each download of the
/// list that is new or changed (its state, its bytes); `download` with `"state": "removed"` for
/// one that left the list (ended long enough ago, or pushed out by others). A client that
/// connects gets ``current``: the counts and every download of the list.
struct DownloadList {
    private(set) var downloads: [TransferProgress] = []
    private(set) var counts = Counts()

    struct Counts: Equatable {
        var active = 0, waiting = 0, queued = 0
    }

    /// Takes `snapshot` as what the clients know; returns what tells them.
    mutating func update(to snapshot: TransferProgressBoard.Snapshot) -> [JSONValue] {
        var events: [JSONValue] = []
        let newCounts = Counts(active: snapshot.active, waiting: snapshot.waiting, queued: snapshot.queued)
        if newCounts != counts { events.append(Self.countsEvent(newCounts)) }
        let before = Dictionary(downloads.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        let now = Set(snapshot.downloads.map(\.number))
        for download in downloads where !now.contains(download.number) {
            events.append(.object([("event", .string("download")), ("download", .int(download.number)), ("state", .string("removed"))]))
        }
        for download in snapshot.downloads where before[download.number] != download {
            events.append(Self.event(download))
        }
        downloads = snapshot.downloads
        counts = newCounts
        return events
    }

    /// Everything, for a client that just connected.
    var current: [JSONValue] { [Self.countsEvent(counts)] + downloads.map(Self.event) }

    /// `{"event": "downloads", "active": 1, "waiting": 0, "queued": 3}`.
    static func countsEvent(_ counts: Counts) -> JSONValue {
        .object([("event", .string("downloads")), ("active", .int(counts.active)), ("waiting", .int(counts.waiting)),
                 ("queued", .int(counts.queued))])
    }

    /// `{"event": "download", "download": 3, "title": ..., "feed": ..., "path": ..., "state": "downloading",
    /// "received": 123456, "expected": 2000000}`, with `"error"` when it waits or failed.
    static func event(_ download: TransferProgress) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("event", .string("download")), ("download", .int(download.number)),
            ("title", download.title.map { .string($0) } ?? .null), ("feed", download.feedTitle.map { .string($0) } ?? .null),
            ("path", .string(download.relativePath)), ("state", .string(download.state.name)),
            ("received", .int(Int(download.received))), ("expected", download.expected.map { .int(Int($0)) } ?? .null),
        ]
        if let reason = download.state.reason { fields.append(("error", .string(reason))) }
        return .object(fields)
    }
}
