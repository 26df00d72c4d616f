import FeedFetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MPDProtocol
import Synchronization

/// Remote playlists (`load http://…/station.pls`, `listplaylist URL`): fetched before the
/// command that names them runs, off the partition's queue, then handed to that command.
///
/// The partition's queue must never wait on the network, yet `load` is a synchronous command
/// on it. So the connection asks ``fetch(_:)`` for the URLs its pending work names
/// (`ClientSession.pendingPlaylistURLs`) before lending the work to the queue, and the
/// command takes the parsed document with ``take(_:)``. The GET is the feeds' bounded one
/// (`FeedFetching`: redirects capped, the whole fetch raced against a time limit, the body
/// capped as it streams); the body is read by the pure ``PlaylistDocument``.
///
/// Thread-safe: the fetched documents are owned by a `Mutex`; ``fetch(_:)`` runs anywhere,
/// ``take(_:)`` on the partition's queue.
package final class RemotePlaylists: Sendable {
    /// The most bytes a remote playlist may have (a radio directory's list is a few KiB).
    static let maximumSize = 256 * 1024
    /// Seconds a fetch may take, body included.
    static let timeout = 10.0

    private struct State {
        /// What the last fetch of each URL gave, by client and URL, until the client's command
        /// takes it (two clients loading the same URL at once each get their own).
        var fetched: [Key: Result<PlaylistDocument, MPDError>] = [:]
    }

    private struct Key: Hashable {
        var client: Int
        var uri: String
    }

    private let state = Mutex(State())

    /// At most this many fetched documents wait to be taken (a client that went away leaves its own).
    static let maximumKept = 64

    /// Where the GETs go (the feeds' HTTP client); without one, remote playlists fail.
    private let fetcher: (any FeedFetching)?

    package init(fetcher: (any FeedFetching)?) {
        self.fetcher = fetcher
    }

    /// Fetches and parses each URL for `client` (``ClientSession/clientID``), keeping the
    /// outcome for its ``take(_:for:)``. Never throws.
    func fetch(_ uris: [String], for client: Int) async {
        for uri in Set(uris) {
            let outcome = await Self.load(uri, with: fetcher)
            state.withLock { state in
                if state.fetched.count >= Self.maximumKept { state.fetched.removeAll() }
                state.fetched[Key(client: client, uri: uri)] = outcome
            }
        }
    }

    /// The document fetched for `uri` for `client` (and forgotten), or the error the command answers with.
    func take(_ uri: String, for client: Int) throws(MPDError) -> PlaylistDocument {
        guard let outcome = state.withLock({ $0.fetched.removeValue(forKey: Key(client: client, uri: uri)) }) else {
            throw MPDError(.noExist, "No such playlist")
        }
        return try outcome.get()
    }

    private static func load(_ uri: String, with fetcher: (any FeedFetching)?) async -> Result<PlaylistDocument, MPDError> {
        let url: URL
        do {
            url = try StreamURL.parse(uri)
        } catch {
            return .failure(error)
        }
        guard let fetcher else { return .failure(MPDError(.system, "remote playlists are not available")) }
        let request = FeedRequest(url: url, validators: FeedValidators(), timeout: timeout, maximumBodySize: maximumSize)
        switch await fetcher.fetch(request) {
        case .body(let data, let finalURL, _, _):
            do {
                return .success(try PlaylistDocument.parse(Array(data), base: finalURL))
            } catch {
                return .failure(MPDError(.playlistLoad, "\(url.absoluteString): \(error)"))
            }
        case .notModified:
            return .failure(MPDError(.playlistLoad, "\(url.absoluteString): not modified (no body)"))
        case .failed(let why, _):
            return .failure(MPDError(.playlistLoad, "\(url.absoluteString): \(why)"))
        }
    }
}
