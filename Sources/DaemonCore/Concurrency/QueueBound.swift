import Dispatch

/// A mutable value that lives on one dispatch queue, as swift-nio's `NIOLoopBoundBox` lives on
/// one event loop: every read and write first asserts that it runs on that queue, so a
/// confinement mistake stops at once (in a debug build: `dispatchPrecondition`) instead of
/// corrupting state later.
///
/// This is the daemon's one place where a queue's confinement is taken on trust by the
/// compiler (`@unchecked Sendable`); the types confined to a queue keep their mutable state in
/// one of these and so are plainly `Sendable`.
@dynamicMemberLookup
public final class QueueBound<Value>: @unchecked Sendable {
    /// The queue that owns ``value``.
    public let queue: DispatchQueue
    private var storage: Value

    public init(_ value: Value, on queue: DispatchQueue) {
        self.queue = queue
        storage = value
    }

    /// The value; only on ``queue``.
    public var value: Value {
        get {
            dispatchPrecondition(condition: .onQueue(queue))
            return storage
        }
        _modify {
            dispatchPrecondition(condition: .onQueue(queue))
            yield &storage
        }
        set {
            dispatchPrecondition(condition: .onQueue(queue))
            storage = newValue
        }
    }

    /// One field of the value (`box.field`); only on ``queue``.
    public subscript<Field>(dynamicMember field: WritableKeyPath<Value, Field>) -> Field {
        get { value[keyPath: field] }
        set { value[keyPath: field] = newValue }
    }

    /// Runs `body` with the value in place; only on ``queue``.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        dispatchPrecondition(condition: .onQueue(queue))
        return try body(&storage)
    }
}
