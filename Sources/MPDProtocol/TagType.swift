/// A song tag as mpd names it on the wire (`Artist: ...`).
///
/// The cases are the 30 tag types mpd 0.23 lists for `tagtypes` with its default
/// configuration, in mpd's order. Tag keys are case-sensitive for mpc, so always use
/// ``protocolName``.
public enum TagType: String, Sendable, Hashable, CaseIterable, Codable {
    case artist = "Artist"
    case artistSort = "ArtistSort"
    case album = "Album"
    case albumSort = "AlbumSort"
    case albumArtist = "AlbumArtist"
    case albumArtistSort = "AlbumArtistSort"
    case title = "Title"
    case track = "Track"
    case name = "Name"
    case genre = "Genre"
    case date = "Date"
    case originalDate = "OriginalDate"
    case composer = "Composer"
    case composerSort = "ComposerSort"
    case performer = "Performer"
    case conductor = "Conductor"
    case work = "Work"
    case movement = "Movement"
    case movementNumber = "MovementNumber"
    case ensemble = "Ensemble"
    case location = "Location"
    case grouping = "Grouping"
    case disc = "Disc"
    case label = "Label"
    case musicBrainzArtistID = "MUSICBRAINZ_ARTISTID"
    case musicBrainzAlbumID = "MUSICBRAINZ_ALBUMID"
    case musicBrainzAlbumArtistID = "MUSICBRAINZ_ALBUMARTISTID"
    case musicBrainzTrackID = "MUSICBRAINZ_TRACKID"
    case musicBrainzReleaseTrackID = "MUSICBRAINZ_RELEASETRACKID"
    case musicBrainzWorkID = "MUSICBRAINZ_WORKID"

    /// The key used in song blocks and in `tagtype:` lines, e.g. `AlbumArtist`.
    public var protocolName: String { rawValue }

    /// Looks a tag name up case-insensitively, as `tagtypes enable` does.
    public init?(protocolName name: String) {
        guard let match = TagType.allCases.first(where: { ASCII.equalsIgnoringCase($0.rawValue, name) }) else {
            return nil
        }
        self = match
    }

    /// Names mpd knows but does not enable by default; `tagtypes enable/disable` accepts them and they do nothing.
    static let knownButDisabledNames = ["Comment"]
}
