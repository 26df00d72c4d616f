/// `Content-Range: bytes START-END/TOTAL` (TOTAL may be `*`).
struct ContentRange: Equatable {
    var start: Int64
    var end: Int64
    var total: Int64?

    init(start: Int64, end: Int64, total: Int64?) {
        self.start = start
        self.end = end
        self.total = total
    }

    init?(_ header: String) {
        guard let match = header.wholeMatch(of: #/\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*/#),
              let start = Int64(match.1), let end = Int64(match.2), start <= end else { return nil }
        self.start = start
        self.end = end
        total = Int64(match.3)
        if let total, end >= total { return nil }
    }
}
