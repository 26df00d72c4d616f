/// An HTTP response's `ETag` and `Last-Modified`, kept per feed between fetches.
public struct FeedValidators: Codable, Sendable, Equatable {
    public var entityTag: String?
    public var lastModified: String?

    public init(entityTag: String? = nil, lastModified: String? = nil) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    public var isEmpty: Bool { entityTag == nil && lastModified == nil }
}
