import Foundation
import Location
import MPDProtocol

/// Location updates and regions on the control socket (not mpd's): `location`,
/// `locations`, `locationupdates`, `locationaccuracy`, `locationdistance`, `regions`.
/// Without `--location` each is `ACK [50@0] {NAME} location updates are off (start with --location)`.
struct LocationCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .location, .locations, .locationupdates, .locationaccuracy, .locationdistance, .regions,
    ]

    /// `--location`'s service; nil without.
    let location: LocationService?

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        switch command {
        case .location, .locations, .locationupdates, .locationaccuracy, .locationdistance, .regions: break
        default: return nil
        }
        guard let service = location else {
            throw MPDError(.noExist, "location updates are off (start with --location)")
        }
        var reply = Reply()
        switch command {
        case .location:
            guard let last = service.fixes.last else { break }
            Self.append(last, lost: service.fixLost, to: &reply)
        case .locations:
            for fix in service.fixes { Self.append(fix, lost: false, to: &reply) }
        case .locationupdates(let mode):
            service.setMode(mode)
        case .locationaccuracy(let name):
            guard let accuracy = LocationAccuracy.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
                let names = LocationAccuracy.allCases.map(\.rawValue).joined(separator: ", ")
                throw MPDError(.argument, "Unrecognized accuracy \"\(name)\", expected one of \(names)")
            }
            service.manager.desiredAccuracy = accuracy
        case .locationdistance(let metres):
            service.manager.distanceFilter = metres
        case .regions:
            let inside = Dictionary(service.manager.regionStates.map { ($0.region.identifier, $0.inside == true) }, uniquingKeysWith: { $1 })
            for waypoint in service.regions {
                reply.append("region", waypoint.name)
                reply.append("lat", Self.degrees(waypoint.region.center.latitude))
                reply.append("lon", Self.degrees(waypoint.region.center.longitude))
                reply.append("radius", Self.decimal(waypoint.region.radius))
                if let course = waypoint.region.course { reply.append("course", course.description) }
                if let audio = waypoint.audio { reply.append("audio", audio.path) }
                reply.append("inside", inside[waypoint.name] == true ? 1 : 0)
            }
        default:
            return nil
        }
        return reply
    }

    /// One fix as `key: value` lines; unknown values (negative, as in Core Location) are left out.
    private static func append(_ fix: Location, lost: Bool, to reply: inout Reply) {
        reply.append("lat", degrees(fix.coordinate.latitude))
        reply.append("lon", degrees(fix.coordinate.longitude))
        if fix.horizontalAccuracy >= 0 { reply.append("accuracy", decimal(fix.horizontalAccuracy)) }
        if fix.fix == .threeDimensional { reply.append("altitude", decimal(fix.altitude)) }
        if fix.speed >= 0 { reply.append("speed", decimal(fix.speed)) }
        if fix.course >= 0 { reply.append("course", decimal(fix.course)) }
        reply.append("time", Location.utc(fix.timestamp))
        reply.append("mode", lost ? "none" : fix.fix.name)
    }

    private static func degrees(_ value: Double) -> String { String(format: "%.8f", locale: nil, value) }
    private static func decimal(_ value: Double) -> String { String(format: "%.2f", locale: nil, value) }
}
