import MPDProtocol

/// One key's values (a tag, with MPD's fallbacks, or the URI) for every song of the
/// database, as numbers: what `list` counts distinct combinations of.
///
/// `list album group albumartist` over 10,000 songs hashed 20,000 strings into a set of
/// string arrays per command. The database changes only on `update`, so ``LibraryUpdater``
/// builds a column once per database and key, and `list` works on numbers. A value's
/// number is its rank among the column's distinct values in `String`'s order, so sorting
/// numbers sorts the rows as the strings would sort (``SongDatabase/distinctValues``).
struct TagColumn: Sendable {
    /// The distinct values, sorted; a value's number is its index here.
    let values: [String]
    /// Song `i`'s value numbers are `numbers[starts[i]..<starts[i + 1]]` (at least one: a
    /// song without the tag has `""`, as ``SongDatabase/Record/forEachValue(of:_:)`` gives).
    private let starts: [Int32]
    private let numbers: [Int32]

    /// The column of `key` for `songs` (the database's songs in order).
    init(key: FilterKey, songs: [SongDatabase.Record]) {
        var numberOf: [String: Int32] = [:]
        var firstNumbers: [Int32] = []
        var starts: [Int32] = [0]
        starts.reserveCapacity(songs.count + 1)
        firstNumbers.reserveCapacity(songs.count)
        for song in songs {
            song.forEachValue(of: key) { value in
                if let known = numberOf[value] {
                    firstNumbers.append(known)
                } else {
                    let number = Int32(numberOf.count)
                    numberOf[value] = number
                    firstNumbers.append(number)
                }
            }
            starts.append(Int32(firstNumbers.count))
        }
        // Renumber by rank, so that numbers sort as their strings do.
        let sorted = numberOf.keys.sorted()
        var rank = [Int32](repeating: 0, count: sorted.count)
        for (index, value) in sorted.enumerated() { rank[Int(numberOf[value]!)] = Int32(index) }
        values = sorted
        self.starts = starts
        numbers = firstNumbers.map { rank[Int($0)] }
    }

    /// `list KEY [FILTER] [group GROUP]` over `songs` (the songs the columns were built
    /// from): the distinct `[group value, value]` rows (`[value]` without a group) of the
    /// songs that pass `filter`, sorted; the same rows as ``SongDatabase/distinctValues``.
    /// A row is two numbers packed into one integer, so the set holds no strings.
    static func distinctRows(of key: TagColumn, groupedBy group: TagColumn?,
                             songs: [SongDatabase.Record], filter: SongFilter?) -> [[String]] {
        var rows = Set<UInt64>()
        for index in songs.indices where filter?.matches(songs[index]) ?? true {
            key.forEachNumber(ofSong: index) { value in
                guard let group else { return _ = rows.insert(UInt64(UInt32(value))) }
                group.forEachNumber(ofSong: index) { groupValue in
                    rows.insert(UInt64(UInt32(groupValue)) << 32 | UInt64(UInt32(value)))
                }
            }
        }
        return rows.sorted().map { row in
            let value = key.values[Int(row & 0xFFFF_FFFF)]
            guard let group else { return [value] }
            return [group.values[Int(row >> 32)], value]
        }
    }

    /// Calls `body` with the number of each of song `index`'s values.
    @inline(__always)
    func forEachNumber(ofSong index: Int, _ body: (Int32) -> Void) {
        for position in Int(starts[index])..<Int(starts[index + 1]) { body(numbers[position]) }
    }
}
