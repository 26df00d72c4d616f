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
/// Foundation's `XMLParser` (namespaces processed, external entities never resolved).
enum RegionFile {
    static let namespace = "urn:queueplayerd:regions:1"
    static let defaultRadius = 50.0

    /// The waypoints that are usable, and a line for each problem.
    static func read(_ file: URL) throws -> (waypoints: [RegionWaypoint], problems: [String]) {
        let data = try Data(contentsOf: file)
        return parse(data, relativeTo: file.deletingLastPathComponent())
    }

    static func parse(_ data: Data, relativeTo directory: URL) -> (waypoints: [RegionWaypoint], problems: [String]) {
        let reader = Reader(directory: directory)
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        let parsed = parser.parse()
        // corelibs' XMLParser may end a truncated document without failing: an element still open is an error too.
        if !parsed || reader.error != nil || reader.depth > 0 {
            let at = reader.current.map { " in waypoint \($0.displayName)" } ?? ""
            let why = reader.error ?? parser.parserError.map { "\($0.localizedDescription)" } ?? "the document ends inside an element"
            reader.problems.append("the GPX file is malformed at line \(parser.lineNumber)\(at): \(why)")
        }
        return (reader.waypoints, reader.problems)
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
        private var count = 0
        private var text = ""
        private var inExtensions = false

        init(directory: URL) {
            self.directory = directory
        }

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            depth += 1
            text = ""
            switch elementName {
            case "wpt":
                count += 1
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
            guard !waypoints.contains(where: { $0.name == identifier }) else { return problem("the name is used twice") }
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
        }
    }
}
