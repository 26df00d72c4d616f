/// Order statistics and a straight-line fit, for tests that state timing properties
/// over many samples instead of trusting any single one.
public enum Statistics {
    /// The `p`-th percentile (0...100) of `values`, by the nearest-rank method; nil when empty.
    public static func percentile(_ p: Double, of values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// The median of `values`; nil when empty.
    public static func median(_ values: [Double]) -> Double? { percentile(50, of: values) }

    /// The least-squares slope of `y` against `x`; nil with fewer than two distinct `x`.
    public static func slope(_ points: [(x: Double, y: Double)]) -> Double? {
        guard points.count >= 2 else { return nil }
        let n = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / n
        let meanY = points.reduce(0) { $0 + $1.y } / n
        var covariance = 0.0, variance = 0.0
        for point in points {
            covariance += (point.x - meanX) * (point.y - meanY)
            variance += (point.x - meanX) * (point.x - meanX)
        }
        return variance > 0 ? covariance / variance : nil
    }
}
