import DaemonCore
import Dispatch
import FeedFetch

/// Pushes the podcast downloads' progress to the web clients (docs/websocket.md, `download`):
/// it samples the ``TransferProgressBoard`` at most once a ``period`` and sends what changed
/// (``DownloadList``), so each download gets at most a few events a second however fast its
/// chunks come, and the download itself never waits for this (its body loop only stores its
/// byte count in an atomic).
///
/// A change of a download's state (started, waiting, ended) asks for a sample at once, or as
/// soon as the period allows; while a download runs and a client is connected, samples follow
/// every period. With nothing running, nothing wakes up.
///
/// `Sendable`: its state is a `QueueBound` of ``queue``, where every sample runs.
final class DownloadProgressPublisher: Sendable {
    /// The shortest time between two samples, seconds.
    static let period = 0.25
    /// The downloads listed, at most (a feed's thousand new episodes are counted, not listed).
    static let listLimit = 20

    private struct State {
        var list = DownloadList()
        /// When the last sample ran; nil before the first.
        var lastSample: DispatchTime?
        var isScheduled = false
    }

    private let board: TransferProgressBoard
    private let clients: WebClients
    private let queue = DispatchQueue(label: "queueplayerd.web.downloads")
    private let state: QueueBound<State>

    init(board: TransferProgressBoard, clients: WebClients) {
        self.board = board
        self.clients = clients
        state = QueueBound(State(), on: queue)
        board.setObserver { [weak self] in self?.changed() }
    }

    /// A download's state changed (from the transfers' queue): a sample soon.
    func changed() {
        queue.async { [self] in schedule() }
    }

    /// A client connected: it gets the list as the others know it, then what changes.
    func connected(_ client: WebSocketClient) {
        queue.async { [self] in
            for event in state.list.current { client.push(event) }
            schedule()
        }
    }

    private func schedule() {
        guard !state.isScheduled else { return }
        state.isScheduled = true
        let now = DispatchTime.now()
        let due = state.lastSample.map { $0 + Self.period } ?? now
        queue.asyncAfter(deadline: max(now, due)) { [weak self] in self?.sample() }
    }

    private func sample() {
        state.isScheduled = false
        state.lastSample = .now()
        let snapshot = board.snapshot(limit: Self.listLimit)
        for event in state.list.update(to: snapshot) { clients.broadcast(event) }
        // Bytes move only while something downloads; nobody listening, they need not be sampled.
        if snapshot.active > 0 && clients.count > 0 { schedule() }
    }
}
