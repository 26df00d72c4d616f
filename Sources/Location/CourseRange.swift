import Foundation

/// The directions of travel that trigger a region, in degrees clockwise from north, from
/// ``from`` to ``to`` clockwise: `45-105`, or across north, `350-20`.
public struct CourseRange: Hashable, Sendable, Codable, CustomStringConvertible {
    public var from: Double
    public var to: Double

    public init?(from: Double, to: Double) {
        guard from.isFinite, to.isFinite, (0...360).contains(from), (0...360).contains(to) else { return nil }
        self.from = from
        self.to = to
    }

    /// `FROM-TO` in degrees (`350-20`); nil if it is not that.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2,
              let from = Double(parts[0].trimmingCharacters(in: .whitespaces)),
              let to = Double(parts[1].trimmingCharacters(in: .whitespaces)) else { return nil }
        self.init(from: from, to: to)
    }

    /// Whether a course (degrees) lies in the range, clockwise from ``from`` to ``to``; an
    /// unknown (negative) course lies in none.
    public func contains(_ course: Double) -> Bool {
        guard course >= 0, course.isFinite else { return false }
        let course = course.truncatingRemainder(dividingBy: 360)
        let from = from.truncatingRemainder(dividingBy: 360), to = to.truncatingRemainder(dividingBy: 360)
        return from <= to ? (from...to).contains(course) : course >= from || course <= to
    }

    public var description: String { "\(Self.trim(from))-\(Self.trim(to))" }

    private static func trim(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
