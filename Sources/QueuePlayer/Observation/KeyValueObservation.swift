import Synchronization

/// What a key-value observation reports, as `NSKeyValueObservingOptions` does.
public struct ObservingOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Include the new value in changes.
    public static let new = ObservingOptions(rawValue: 1 << 0)
    /// Include the old value in changes.
    public static let old = ObservingOptions(rawValue: 1 << 1)
    /// Call the handler once at once, with the current value as `newValue`.
    public static let initial = ObservingOptions(rawValue: 1 << 2)
    /// Call the handler also just before each change, with `isPrior` set.
    public static let prior = ObservingOptions(rawValue: 1 << 3)
}

/// One reported change of an observed property (KVO's `NSKeyValueObservedChange`).
public struct ObservedChange<Value: Sendable>: Sendable {
    /// The value after the change (`nil` unless `.new` was asked for, and in prior calls).
    public let newValue: Value?
    /// The value before the change (`nil` unless `.old` was asked for, and in initial calls).
    public let oldValue: Value?
    /// True in the call made just before the change (option `.prior`).
    public let isPrior: Bool
}

/// An object whose properties can be observed with `observe(_:options:changeHandler:)`.
///
/// Swift on Linux has no Objective-C KVO; conforming types announce their
/// changes through their ``ObservationRegistry`` instead.
public protocol KeyValueObservable: AnyObject, Sendable {
    /// Where observers of this object are kept.
    var observationRegistry: ObservationRegistry { get }
}

extension KeyValueObservable {
    /// Observes the property at `keyPath` the way KVO's block-based `observe` does.
    ///
    /// The handler runs synchronously on the thread that changes the property
    /// (for a player, its internal control queue; for `.initial`, the caller's
    /// thread, before this method returns). The observation lasts until the
    /// returned token is invalidated or released.
    public func observe<Value: Sendable>(
        _ keyPath: KeyPath<Self, Value> & Sendable,
        options: ObservingOptions = [],
        changeHandler: @escaping @Sendable (Self, ObservedChange<Value>) -> Void
    ) -> Observation {
        let entry = TypedObservationEntry(object: self, keyPath: keyPath, options: options, handler: changeHandler)
        let token = observationRegistry.add(entry, for: keyPath)
        if options.contains(.initial) {
            changeHandler(self, ObservedChange(newValue: options.contains(.new) ? self[keyPath: keyPath] : nil,
                                               oldValue: nil, isPrior: false))
        }
        return token
    }
}

/// The observers of one object, and the way it announces changes to them.
public final class ObservationRegistry: Sendable {
    private struct State {
        var nextID = 0
        var entries: [PropertyKey: [(id: Int, entry: any ObservationEntry)]] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Announces a change of the property at `keyPath`, made by `mutation`.
    ///
    /// Prior observers are called before `mutation` runs and the others after;
    /// no lock is held while handlers run, so they may read the object freely.
    public func change(_ keyPath: AnyKeyPath, _ mutation: () -> Void) {
        let key = PropertyKey(keyPath)
        let entries = state.withLock { $0.entries[key]?.map(\.entry) ?? [] }
        for entry in entries { entry.willChange() }
        mutation()
        for entry in entries { entry.didChange() }
    }

    func add(_ entry: any ObservationEntry, for keyPath: AnyKeyPath) -> Observation {
        let key = PropertyKey(keyPath)
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.entries[key, default: []].append((state.nextID, entry))
            return state.nextID
        }
        return Observation(registry: self, key: key, id: id)
    }

    fileprivate func remove(_ key: PropertyKey, id: Int) {
        let removed = state.withLock { state -> [any ObservationEntry] in
            let matching = state.entries[key]?.filter { $0.id == id }.map(\.entry) ?? []
            state.entries[key]?.removeAll { $0.id == id }
            return matching
        }
        for entry in removed { entry.cancel() }
    }
}

/// A live key-value observation. It ends on ``invalidate()`` or when released.
public final class Observation: Sendable {
    private struct Registration: Sendable {
        let registry: ObservationRegistry
        let key: PropertyKey
        let id: Int
    }

    private let registration: Mutex<Registration?>

    fileprivate init(registry: ObservationRegistry, key: PropertyKey, id: Int) {
        registration = Mutex(Registration(registry: registry, key: key, id: id))
    }

    /// Stops the observation; no handler call starts after this returns. Safe to call twice.
    public func invalidate() {
        let taken = registration.withLock { value -> Registration? in
            defer { value = nil }
            return value
        }
        if let taken { taken.registry.remove(taken.key, id: taken.id) }
    }

    deinit { invalidate() }
}

/// A key path as a dictionary key.
///
/// Owner: none needed: a key path is immutable once made (the standard library does not mark
/// `AnyKeyPath` `Sendable`, and ``ObservationRegistry/change(_:_:)`` takes any).
struct PropertyKey: Hashable, @unchecked Sendable {
    let keyPath: AnyKeyPath
    init(_ keyPath: AnyKeyPath) { self.keyPath = keyPath }
}

protocol ObservationEntry: Sendable {
    func willChange()
    func didChange()
    func cancel()
}

private final class TypedObservationEntry<Object: AnyObject & Sendable, Value: Sendable>: ObservationEntry {
    private weak let object: Object?
    private let keyPath: KeyPath<Object, Value> & Sendable
    private let options: ObservingOptions
    private let handler: @Sendable (Object, ObservedChange<Value>) -> Void
    private let oldValue = Mutex<Value?>(nil)
    private let active = Atomic<Bool>(true)

    init(object: Object, keyPath: KeyPath<Object, Value> & Sendable, options: ObservingOptions,
         handler: @escaping @Sendable (Object, ObservedChange<Value>) -> Void) {
        self.object = object
        self.keyPath = keyPath
        self.options = options
        self.handler = handler
    }

    func cancel() { active.store(false, ordering: .releasing) }

    func willChange() {
        guard active.load(ordering: .acquiring), let object else { return }
        let old = object[keyPath: keyPath]
        oldValue.withLock { $0 = old }
        if options.contains(.prior) {
            handler(object, ObservedChange(newValue: nil, oldValue: options.contains(.old) ? old : nil, isPrior: true))
        }
    }

    func didChange() {
        guard active.load(ordering: .acquiring), let object else { return }
        let old = oldValue.withLock { value -> Value? in
            defer { value = nil }
            return value
        }
        handler(object, ObservedChange(newValue: options.contains(.new) ? object[keyPath: keyPath] : nil,
                                       oldValue: options.contains(.old) ? old : nil, isPrior: false))
    }
}
