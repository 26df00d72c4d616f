#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where an episode's chapters file (its `podcast:chapters` JSON) is kept: beside the audio,
/// `Podcasts/<feed>/<episode>.chapters.json` for `<episode>.mp3`, so that the chapters go
/// with the file (a rename by a user excepted) and work offline.
public enum ChaptersFile {
    /// The chapters file of the episode file at `episode`.
    public static func url(forEpisode episode: URL) -> URL {
        episode.deletingPathExtension().appendingPathExtension("chapters.json")
    }

    /// The chapters file's path for an episode path relative to the music directory.
    public static func relativePath(forEpisode path: String) -> String {
        let dot = path.lastIndex(of: ".").flatMap { $0 > (path.lastIndex(of: "/") ?? path.startIndex) ? $0 : nil }
        return String(path[..<(dot ?? path.endIndex)]) + ".chapters.json"
    }
}
