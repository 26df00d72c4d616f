import Dispatch
@testable import FeedFetch
import Foundation
import Synchronization

/// A ``FeedFetching`` that answers from a script, records every request, and can hold
/// fetches until the test lets them go (to have pushes arrive while one runs).
final class ScriptedFetcher: FeedFetching {
    private struct State {
        var requests: [FeedRequest] = []
        var held = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let answer: @Sendable (FeedRequest, Int) -> FeedResponse

    /// `answer` gets each request and its number (0 first).
    init(_ answer: @escaping @Sendable (FeedRequest, Int) -> FeedResponse) {
        self.answer = answer
    }

    var requests: [FeedRequest] { state.withLock { $0.requests } }

    /// From now on, fetches wait for ``release()`` (or their task's cancellation).
    func hold() { state.withLock { $0.held = true } }

    /// Lets every held fetch answer, and the next ones answer at once.
    func release() {
        let waiting = state.withLock { state in
            state.held = false
            defer { state.waiting = [] }
            return state.waiting
        }
        waiting.forEach { $0.resume() }
    }

    func fetch(_ request: FeedRequest) async -> FeedResponse {
        let index = state.withLock { state in
            state.requests.append(request)
            return state.requests.count - 1
        }
        let cancelled = Mutex(false)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    guard state.held, !cancelled.withLock({ $0 }) else { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            // Any held fetch may be the cancelled one: let all go; the others answer early,
            // which the tests that cancel do not mind.
            self.release()
        }
        if Task.isCancelled { return .failed("cancelled", retryAfter: nil) }
        return answer(request, index)
    }
}

/// A ``BackgroundFetchHost`` that counts the tasks begun and ended, and can expire them.
final class RecordingHost: BackgroundFetchHost {
    private struct State {
        var begun: [String] = []
        var ended = 0
        var handlers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    var begun: [String] { state.withLock { $0.begun } }
    var ended: Int { state.withLock { $0.ended } }

    /// Runs every expiration handler, as the application does when the allowance runs out.
    func expireAll() {
        for handler in state.withLock({ $0.handlers }) { handler() }
    }

    func beginBackgroundFetch(named name: String, allowance: Double,
                              expirationHandler: @escaping @Sendable () -> Void) async -> any BackgroundFetchTask {
        state.withLock { state in
            state.begun.append(name)
            state.handlers.append(expirationHandler)
        }
        return Task(end: { [self] in state.withLock { $0.ended += 1 } })
    }

    private final class Task: BackgroundFetchTask {
        private let ending: Mutex<(@Sendable () -> Void)?>
        init(end: @escaping @Sendable () -> Void) { ending = Mutex(end) }
        func end() {
            let end = ending.withLock { end -> (@Sendable () -> Void)? in
                defer { end = nil }
                return end
            }
            end?()
        }
    }
}

enum FeedBodies {
    static let feedURL = URL(string: "http://feeds.test/show.xml")!

    /// An RSS feed with `episodes` items, GUIDs `ep-1` to `ep-N`.
    static func rss(episodes: Int) -> Data {
        let items = (1...max(1, episodes)).prefix(episodes).map { number in
            "<item><title>Episode \(number)</title><guid>ep-\(number)</guid><enclosure url=\"/media/\(number).mp3\" type=\"audio/mpeg\" length=\"1000\"/></item>"
        }.joined()
        return Data("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Test Show</title>\(items)</channel></rss>".utf8)
    }

    static let html = Data("<!DOCTYPE html><html><head><title>Sign in</title></head><body>captive portal</body></html>".utf8)
}
