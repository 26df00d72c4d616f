#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The library's side a ``Partition`` sees: a URL made into the song the queue keeps (its URI in
/// the music directory, its tags and duration from the ``SongIndex``). The library and the song
/// index are the ``Instance``'s; the partition only asks this of them.
package struct SongLookup: Sendable {
    let library: MusicLibrary
    let index: SongIndex

    package init(library: MusicLibrary, index: SongIndex) {
        self.library = library
        self.index = index
    }

    /// The queued song for `url`: a file's details as the index knows them, a stream's URL.
    func song(for url: URL) -> QueuedSong {
        QueuedSong(url: url, library: library, index: index)
    }
}
