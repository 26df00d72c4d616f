/// `locationupdates`' argument: the seed's switch, and the significant-change service.
public enum LocationUpdatesMode: String, Hashable, Sendable {
    case off = "0"
    case on = "1"
    case significant
}
