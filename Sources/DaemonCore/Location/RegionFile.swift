import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Location

/// `--regions FILE.gpx`: GPX waypoints as regions that play. Each `<wpt lat lon>` with its
/// `<name>` and, inside `<extensions>`, elements of the namespace ``namespace`` (any prefix):
/// `<radius>` in metres (default 50), `<audio>` (absolute, or relative to the GPX file) and
/// optionally `<course>FROM-TO</course>` (degrees, clockwise: `350-20`).
///
/// A waypoint that is wrong (coordinates out of range, a bad radius or course, audio that is
/// not there, a name used twice) is left out with a problem naming it; the others are kept. A
/// file that is not well-formed XML keeps the waypoints read before the error. Read with
/// Foundation's `XMLParser` (namespaces processed, external entities never resolved) in one
/// pass whose work grows with the file (each waypoint costs the same however many came
/// before), at most ``maximumWaypoints`` of them, and stopped when its task is cancelled.
enum RegionFile {
    static let namespace = "urn:queueplayerd:regions:1"
    static let defaultRadius = 50.0
    /// More waypoints than any tour has: a file with more is refused (a million took minutes
    /// to read and as much memory as the rest of the daemon many times over).
    static let maximumWaypoints = 100_000
    /// The largest file read (a hundred thousand waypoints with their extensions are about 30 MiB).
    static let maximumSize = 64 << 20

    /// Why a file is refused as a whole.
    struct Refusal: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// The waypoints that are usable, and a line for each problem. Throws ``Refusal`` beyond
    /// ``maximumWaypoints``, `CancellationError` if the task is cancelled while it reads.
    static func read(_ file: URL) throws -> (waypoints: [RegionWaypoint], problems: [String]) {
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        if size > maximumSize { throw Refusal(description: "larger than \(maximumSize >> 20) MiB, more than any tour's waypoints") }
        let data = try Data(contentsOf: file)
        return try parse(data, relativeTo: file.deletingLastPathComponent())
    }

    static func parse(_ data: Data, relativeTo directory: URL) throws -> (waypoints: [RegionWaypoint], problems: [String]) {
        let reader = Reader(directory: directory)
        // A stream, which `XMLParser` hands to libxml2 in chunks: given as one `Data`, libxml2
        // refuses a document of more than 10,000,000 bytes ("Huge input lookup").
        let parser = XMLParser(stream: InputStream(data: withoutExternalEntities(data)))
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        parser.delegate = reader
        let parsed = parser.parse()
        if reader.cancelled { throw CancellationError() }
        if reader.waypointCount > maximumWaypoints {
            throw Refusal(description: "more than \(maximumWaypoints) waypoints (\(reader.waypointCount) read before stopping)")
        }
        // corelibs' XMLParser may end a truncated document without failing: an element still open is an error too.
        if !parsed || reader.error != nil || reader.depth > 0 {
            let at = reader.current.map { " in waypoint \($0.displayName)" } ?? ""
            let why = reader.error ?? parser.parserError.map { "\($0.localizedDescription)" } ?? "the document ends inside an element"
            reader.problems.append("the GPX file is malformed at line \(parser.lineNumber)\(at): \(why)")
        }
        return (reader.waypoints, reader.problems)
    }

    /// `data` with each external entity its document type declares (`<!ENTITY name SYSTEM "...">`,
    /// `PUBLIC` too) declared as an internal one of one space instead, and each reference to an
    /// external parameter entity (`%name;`, after which libxml2 would ignore the declarations
    /// that follow) blanked, in as many bytes, so lines stay where they were. Such an entity is never read anyway, but
    /// corelibs' `XMLParser`, after a reference to an entity it found but could not load, drops
    /// the next run of text it meets, which is the next waypoint's name when nothing lies between
    /// them: that valid waypoint was lost. A reference to an internal entity is read as nothing
    /// (the same code drops its text), and takes nothing else with it. UTF-8 documents only (GPX's).
    static func withoutExternalEntities(_ data: Data) -> Data {
        var bytes = [UInt8](data)
        var index = 0
        func at(_ text: String, _ position: Int) -> Bool {
            let pattern = Array(text.utf8)
            return position + pattern.count <= bytes.count && bytes[position..<(position + pattern.count)].elementsEqual(pattern)
        }
        func skip(past end: String) {
            while index < bytes.count, !at(end, index) { index += 1 }
            index += end.utf8.count
        }
        /// Moves `index` to the next `>` outside quotes (or the end).
        func skipDeclaration() {
            while index < bytes.count, bytes[index] != UInt8(ascii: ">") {
                if bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
                    let quote = bytes[index]
                    index += 1
                    while index < bytes.count, bytes[index] != quote { index += 1 }
                }
                index += 1
            }
        }
        func skipBlanks() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        // The prologue, to the document type: none before the root element, nothing to change.
        while index < bytes.count {
            if at("<?", index) {
                skip(past: "?>")
            } else if at("<!--", index) {
                skip(past: "-->")
            } else if at("<!DOCTYPE", index) {
                break
            } else if bytes[index] == UInt8(ascii: "<") {
                return data
            } else {
                index += 1
            }
        }
        guard index < bytes.count else { return data }
        // Its internal subset, if any: from `[` (outside quotes) to `]`.
        while index < bytes.count, bytes[index] != UInt8(ascii: "["), bytes[index] != UInt8(ascii: ">") {
            if bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
                let quote = bytes[index]
                index += 1
                while index < bytes.count, bytes[index] != quote { index += 1 }
            }
            index += 1
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { return data }
        index += 1
        var changed = false
        var externalParameters: Set<[UInt8]> = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "]") {
            if at("<!--", index) {
                skip(past: "-->")
            } else if at("<?", index) {
                skip(past: "?>")
            } else if at("<!ENTITY", index) {
                index += 8
                skipBlanks()
                let parameter = index < bytes.count && bytes[index] == UInt8(ascii: "%")
                if parameter {
                    index += 1
                    skipBlanks()
                }
                let nameStart = index
                while index < bytes.count, ![0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
                let name = Array(bytes[nameStart..<index])
                skipBlanks()
                let start = index
                let external = at("SYSTEM", start) || at("PUBLIC", start)
                skipDeclaration()
                if external {
                    if parameter { externalParameters.insert(name) }
                    // `SYSTEM "x"` is at least 9 bytes: room for `" "`; line ends kept.
                    for position in start..<index where bytes[position] != UInt8(ascii: "\n") { bytes[position] = UInt8(ascii: " ") }
                    bytes[start] = UInt8(ascii: "\"")
                    bytes[start + 2] = UInt8(ascii: "\"")
                    changed = true
                }
                index += 1
            } else if at("<!", index) {
                index += 2
                skipDeclaration()
                index += 1
            } else if bytes[index] == UInt8(ascii: "%"),
                      let end = bytes[index...].firstIndex(of: UInt8(ascii: ";")),
                      externalParameters.contains(Array(bytes[(index + 1)..<end])) {
                for position in index...end { bytes[position] = UInt8(ascii: " ") }
                index = end + 1
            } else {
                index += 1
            }
        }
        return changed ? Data(bytes) : data
    }

    /// A `<wpt>` as it is read.
    fileprivate struct Pending {
        var index: Int
        var latitude: String?
        var longitude: String?
        var name: String?
        var radius: String?
        var audio: String?
        var course: String?

        var displayName: String { name.map { "\"\($0)\"" } ?? "#\(index)" }
    }

    /// The parser's delegate: one pass, collecting waypoints. Used by one parse on one thread.
    private final class Reader: NSObject, XMLParserDelegate {
        let directory: URL
        var waypoints: [RegionWaypoint] = []
        var problems: [String] = []
        var current: Pending?
        /// The first error the parser reported, if any.
        var error: String?
        /// Elements open.
        var depth = 0
        /// Read before the task's cancellation stopped the parse.
        var cancelled = false
        /// The `<wpt>` elements met.
        var waypointCount: Int { count }
        private var count = 0
        private var elements = 0
        /// The names of ``waypoints``, for the check of a name used twice.
        private var names: Set<String> = []
        private var text = ""
        private var inExtensions = false

        init(directory: URL) {
            self.directory = directory
        }

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            depth += 1
            text = ""
            elements += 1
            // Checked as it goes (every 1,024 elements, a few milliseconds): a stop during a long read ends it.
            if elements % 1024 == 0, Task.isCancelled {
                cancelled = true
                parser.abortParsing()
                return
            }
            switch elementName {
            case "wpt":
                count += 1
                if count > RegionFile.maximumWaypoints {
                    parser.abortParsing()
                    return
                }
                current = Pending(index: count, latitude: attributes["lat"], longitude: attributes["lon"])
            case "extensions":
                inExtensions = true
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            text += string
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            defer { text = "" }
            guard current != nil else { return }
            let ours = inExtensions && namespaceURI == RegionFile.namespace
            switch elementName {
            case "name" where !inExtensions: current?.name = value
            case "radius" where ours: current?.radius = value
            case "audio" where ours: current?.audio = value
            case "course" where ours: current?.course = value
            case "extensions": inExtensions = false
            case "wpt":
                if let pending = current { finish(pending) }
                current = nil
            default: break
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if error == nil { error = "\(parseError.localizedDescription)" }
        }

        private func finish(_ pending: Pending) {
            let name = pending.displayName
            func problem(_ text: String) { problems.append("region \(name): \(text); left out") }
            guard let latitude = pending.latitude.flatMap(Double.init), let longitude = pending.longitude.flatMap(Double.init),
                  Coordinate(latitude: latitude, longitude: longitude).isValid else {
                return problem("bad coordinates (lat \(pending.latitude ?? "missing"), lon \(pending.longitude ?? "missing"))")
            }
            guard let identifier = pending.name, !identifier.isEmpty else { return problem("no <name>") }
            guard !names.contains(identifier) else { return problem("the name is used twice") }
            var radius = RegionFile.defaultRadius
            if let text = pending.radius {
                guard let value = Double(text), value.isFinite, value > 0 else { return problem("bad radius \"\(text)\" (metres, more than 0)") }
                radius = value
            }
            var course: CourseRange?
            if let text = pending.course {
                guard let range = CourseRange(text) else { return problem("bad course \"\(text)\" (FROM-TO in degrees, e.g. 350-20)") }
                course = range
            }
            var audio: URL?
            if let path = pending.audio {
                let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : directory.appendingPathComponent(path)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                    return problem("its audio \(url.path) is not there")
                }
                audio = url.standardizedFileURL
            }
            let region = CircularRegion(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius,
                                        identifier: identifier, course: course)
            waypoints.append(RegionWaypoint(region: region, audio: audio))
            names.insert(identifier)
        }
    }
}
