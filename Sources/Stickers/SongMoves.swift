/// What an update did to the songs that the stickers must follow: files that were renamed or
/// moved, and files that left the library.
///
/// mpd keys stickers by URI and deletes a song's when the song leaves its database, so a
/// renamed file loses them. Here a song that left and a song that came in the same update
/// with the same size, the same modification time to the nanosecond (which `mv` keeps),
/// the same duration and the same tags are taken for one file renamed, and its stickers
/// move to the new URI; when several files are alike in all that, none is taken for another
/// (their stickers go, as mpd's would). What an update of one directory cannot see (a file
/// moved out of the directory updated) is what mpd loses too.
package struct SongMoves: Sendable, Equatable {
    package struct Move: Sendable, Equatable {
        package let from: String
        package let to: String

        package init(from: String, to: String) {
            self.from = from
            self.to = to
        }
    }

    package var moves: [Move] = []
    /// The URIs of the songs gone, in URI order.
    package var removals: [String] = []

    package var isEmpty: Bool { moves.isEmpty && removals.isEmpty }

    package init(moves: [Move] = [], removals: [String] = []) {
        self.moves = moves
        self.removals = removals
    }
}
