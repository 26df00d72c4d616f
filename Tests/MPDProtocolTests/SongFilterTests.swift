import MPDProtocol
import Testing

/// A song as a filter sees it.
struct Song: FilterableSong {
    var uri: String
    var tagValues: [(type: TagType, value: String)]
    var tags: [SongInfo.Tag] { tagValues.map { SongInfo.Tag($0.type, $0.value) } }
    var lastModified: Int64? = 1_700_000_000
    var audioFormat: String? = "44100:16:2"
}

@Suite struct SongFilterTests {
    static let abbey = Song(uri: "Beatles/Abbey Road/01 Come Together.mp3",
                            tagValues: [(.artist, "The Beatles"), (.album, "Abbey Road"), (.title, "Come Together"),
                                        (.genre, "Rock"), (.genre, "Pop")])
    static let mono = Song(uri: "Misc/tone.mp3", tagValues: [(.title, "Tone")], lastModified: 1_600_000_000,
                           audioFormat: "22050:16:1")
    static let various = Song(uri: "Compilations/hits.mp3",
                              tagValues: [(.artist, "Solo Singer"), (.albumArtist, "Various Artists"), (.album, "Hits")])

    static func matching(_ arguments: [String], foldCase: Bool = false) throws -> [String] {
        let filter = try SongFilter(arguments: arguments, foldCase: foldCase)
        return [abbey, mono, various].filter(filter.matches).map(\.uri)
    }

    static func message(_ arguments: [String]) -> String? {
        do {
            _ = try SongFilter(arguments: arguments, foldCase: false)
            return nil
        } catch {
            #expect(error.code == .argument)
            return error.message
        }
    }

    // MARK: - The expression syntax

    @Test func equalityIsWholeAndCaseSensitiveForFind() throws {
        #expect(try Self.matching(["(Artist == 'The Beatles')"]) == [Self.abbey.uri])
        #expect(try Self.matching(["(Artist == 'the beatles')"]).isEmpty)
        #expect(try Self.matching(["(Artist == 'Beatles')"]).isEmpty)
        #expect(try Self.matching(["(artist == \"the beatles\")"], foldCase: true) == [Self.abbey.uri],
                "search folds case; tag names are case-insensitive")
    }

    @Test func aTagWithSeveralValuesMatchesOnAnyOfThem() throws {
        #expect(try Self.matching(["(Genre == 'Pop')"]) == [Self.abbey.uri])
        #expect(try Self.matching(["(Genre != 'Pop')"]) == [Self.mono.uri, Self.various.uri],
                "!= is true only when no value equals")
    }

    @Test func containsStartsWithAndRegularExpressions() throws {
        #expect(try Self.matching(["(Title contains 'Toge')"]) == [Self.abbey.uri])
        #expect(try Self.matching(["(Title !contains 'o')"]) == [Self.various.uri])
        #expect(try Self.matching(["(Album starts_with 'Abb')"]) == [Self.abbey.uri])
        #expect(try Self.matching(["(Title =~ 'T.n')"]) == [Self.mono.uri], "unanchored, as PCRE")
        #expect(try Self.matching(["(Title !~ '^C')"]) == [Self.mono.uri, Self.various.uri])
        #expect(try Self.matching(["(title =~ 'come')"], foldCase: true) == [Self.abbey.uri])
    }

    @Test func anAbsentTagFallsBackOrEqualsTheEmptyString() throws {
        #expect(try Self.matching(["(AlbumArtist == 'The Beatles')"]) == [Self.abbey.uri], "falls back to Artist")
        #expect(try Self.matching(["(AlbumArtist == 'Solo Singer')"]).isEmpty, "only when AlbumArtist is absent")
        #expect(try Self.matching(["(Album == '')"]) == [Self.mono.uri], "an absent tag equals ''")
        #expect(try Self.matching(["(any == 'Rock')"]) == [Self.abbey.uri])
    }

    @Test func fileBaseModifiedSinceAndAudioFormat() throws {
        #expect(try Self.matching(["(file == 'Misc/tone.mp3')"]) == [Self.mono.uri])
        #expect(try Self.matching(["(base 'Beatles')"]) == [Self.abbey.uri])
        #expect(try Self.matching(["(base 'Beat')"]).isEmpty, "a directory, not a prefix of a name")
        #expect(try Self.matching(["(modified-since '1650000000')"]) == [Self.abbey.uri, Self.various.uri])
        #expect(try Self.matching(["(modified-since '2023-11-14T22:13:20Z')"]) == [Self.abbey.uri, Self.various.uri],
                "1,700,000,000 s is 2023-11-14T22:13:20Z")
        #expect(try Self.matching(["(modified-since '2023-11-14T22:13:21Z')"]).isEmpty)
        #expect(try Self.matching(["(modified-since '2023-11-15')"]).isEmpty)
        #expect(try Self.matching(["(AudioFormat == '22050:16:1')"]) == [Self.mono.uri])
        #expect(try Self.matching(["(AudioFormat =~ '44100:*:2')"]) == [Self.abbey.uri, Self.various.uri])
    }

    @Test func notAndAndNestAndSeveralArgumentsAreAnded() throws {
        #expect(try Self.matching(["(!(Artist == 'The Beatles'))"]) == [Self.mono.uri, Self.various.uri])
        #expect(try Self.matching(["((Artist == 'The Beatles') AND (Genre == 'Rock'))"]) == [Self.abbey.uri])
        #expect(try Self.matching(["((Artist == 'The Beatles') AND (Genre == 'Jazz'))"]).isEmpty)
        #expect(try Self.matching(["((Title contains 'o') AND (!(Title contains 'C')) AND (base 'Misc'))"]) == [Self.mono.uri])
        #expect(try Self.matching(["(Title contains 'o')", "(base 'Misc')"]) == [Self.mono.uri])
        #expect(try Self.matching(["((Album == 'Hits'))"]) == [Self.various.uri], "a parenthesised expression")
    }

    @Test func quotingAndEscapes() throws {
        let quoted = Song(uri: "q.mp3", tagValues: [(.title, "It's \"here\"")])
        let filter = try SongFilter(arguments: ["(Title == 'It\\'s \"here\"')"], foldCase: false)
        #expect(filter.matches(quoted))
        let double = try SongFilter(arguments: ["(Title == \"It's \\\"here\\\"\")"], foldCase: false)
        #expect(double.matches(quoted))
    }

    @Test func malformedExpressionsGetMPDsMessages() {
        #expect(Self.message(["(Artist == 'x'"]) == "')' expected")
        #expect(Self.message(["(Artist == 'x') junk"]) == "Unparsed garbage after expression")
        #expect(Self.message(["(Colour == 'x')"]) == "Unknown filter type: Colour")
        #expect(Self.message(["(Artist ~= 'x')"]) == "Unknown filter operator: ~= 'x')")
        #expect(Self.message(["(Artist == x)"]) == "Quoted string expected")
        #expect(Self.message(["(Artist == 'x)"]) == "Closing quote not found")
        #expect(Self.message(["((Artist == 'x') OR (Album == 'y'))"]) == "'AND' expected")
        #expect(Self.message(["(!Artist == 'x')"]) == "'(' expected")
        #expect(Self.message(["( == 'x')"]) == "Word expected")
        #expect(Self.message(["(Title =~ '(')"]) == "Invalid regular expression")
        #expect(Self.message(["(modified-since 'yesterday')"]) == "Failed to parse time stamp")
        #expect(Self.message([]) == "Incorrect number of filter arguments")
    }

    // MARK: - The old TAG VALUE pairs

    @Test func oldPairsAreWholeForFindAndSubstringsForSearch() throws {
        #expect(try Self.matching(["Artist", "The Beatles"]) == [Self.abbey.uri])
        #expect(try Self.matching(["Artist", "beatles"]).isEmpty)
        #expect(try Self.matching(["Artist", "beatles"], foldCase: true) == [Self.abbey.uri])
        #expect(try Self.matching(["any", "o"], foldCase: true) == [Self.abbey.uri, Self.mono.uri, Self.various.uri])
        #expect(try Self.matching(["file", "tone"], foldCase: true) == [Self.mono.uri])
        #expect(try Self.matching(["Artist", "The Beatles", "Album", "Hits"]).isEmpty, "pairs are ANDed")
        #expect(try Self.matching(["base", "Compilations"]) == [Self.various.uri])
        #expect(Self.message(["Artist"]) == "Incorrect number of filter arguments")
        #expect(Self.message(["Colour", "red"]) == "Unknown filter type")
        #expect(Self.message(["base", "../etc"]) == "Bad URI")
    }

    // MARK: - String tests on plain ASCII, byte by byte

    /// `==`, `starts_with` and `contains`, with and without case folding, give what `String`'s
    /// `lowercased()`, `==`, `hasPrefix` and `contains` give, whether the value and the song's
    /// tag are plain ASCII (tested byte by byte) or not (tested as strings): upper and lower
    /// case, non-ASCII letters whose lower case is ASCII (the Kelvin sign) or longer (İ),
    /// a CR LF pair (one `Character`), empty values.
    @Test func byteWiseTestsAgreeWithStringComparison() throws {
        let titles = ["Come Together", "COME", "come", "", "Café Crème", "Straße", "a\r\nb", "İstanbul",
                      "\u{212A}elvin", "kelvin", "x", "cafe\u{301}", "e\u{301}", "Nyström come", "東京 Nights",
                      "x\u{600}come", "come\u{200D}", "\u{37E}", "\u{1FEF}x", "ÄcomeÖ", "Ä come Ö", "comé"]
        let wanted = ["come", "COME", "Come", "", "cafe", "café", "e", "\r", "a\r", "\n", "istanbul", "i̇stanbul",
                      "kelvin", "\u{212A}", "ss", "Together", "x", "xx", ";", "`x", "nights", "Ny", "com"]
        for title in titles {
            let song = Song(uri: "t.mp3", tagValues: [(.title, title)])
            for value in wanted {
                for foldCase in [false, true] {
                    let (subject, pattern) = foldCase ? (title.lowercased(), value.lowercased()) : (title, value)
                    let expected: [(String, Bool)] = [
                        ("==", subject == pattern), ("starts_with", subject.hasPrefix(pattern)),
                        ("contains", pattern.isEmpty || subject.contains(pattern))]
                    for (op, result) in expected {
                        let filter = try SongFilter(arguments: ["(Title \(op) '\(value)')"], foldCase: foldCase)
                        #expect(filter.matches(song) == result,
                                "\(title.debugDescription) \(op) \(value.debugDescription), foldCase \(foldCase)")
                    }
                }
            }
        }
    }

    /// Random tag values mixing ASCII with combining marks, a prepended mark, a joiner,
    /// non-ASCII letters and the characters that are ASCII once folded or normalised, tested
    /// with plain values (answered byte by byte) and with values that are not (ruled out by
    /// their ASCII run where they can be): the answer is always `String`'s.
    @Test func byteWiseTestsAgreeWithStringComparisonOnMixedText() throws {
        let pieces = ["a", "b", "A", "B", " ", "ab", "e", "\u{301}", "é", "\u{600}", "\u{200D}", "ö", "東", "\u{212A}",
                      "k", "\u{130}", "i", "\u{37E}", ";", "\u{1FEF}", "`", "\n", "\u{1F600}"]
        let values = ["a", "ab", "b a", "e", "k", "i", ";", "`", "A", "ba", "", "abab", "\n",
                      "aö", "öab", "ab\u{301}", "abé", "ké", "ö", "東a", "Ab\u{130}", "b\u{200D}a", "\na"]
        var generator = Xorshift(seed: 0x0A5C11)
        for _ in 0..<600 {
            let title = (0..<Int.random(in: 0...7, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let song = Song(uri: "t.mp3", tagValues: [(.title, title)])
            for value in values {
                for foldCase in [false, true] {
                    let (subject, pattern) = foldCase ? (title.lowercased(), value.lowercased()) : (title, value)
                    for (op, expected) in [("==", subject == pattern), ("starts_with", subject.hasPrefix(pattern)),
                                           ("contains", pattern.isEmpty || subject.contains(pattern))] {
                        let filter = try SongFilter(arguments: ["(Title \(op) '\(value)')"], foldCase: foldCase)
                        #expect(filter.matches(song) == expected,
                                "\(title.unicodeScalars.map { String($0.value, radix: 16) }) \(op) \(value.debugDescription), foldCase \(foldCase)")
                    }
                }
            }
        }
    }
}
