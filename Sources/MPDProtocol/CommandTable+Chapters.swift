extension CommandTable {
    /// Chapters (not mpd's, named in its style): reading them needs `read`, as `currentsong`
    /// does; moving to one needs `player`, as `seekcur` does.
    static let chapterEntries: [Entry] = [
        entry(.chapters, "chapters", .between(0, 1), .read, [.expensive, .listReply]) { arguments, _ throws(MPDError) in
            .chapters(uri: arguments.first)
        },
        entry(.seekchapter, "seekchapter", .exactly(1), .player) { arguments, parse throws(MPDError) in
            guard let target = ChapterTarget(argument: arguments[0]) else {
                throw MPDError(.argument, "Expected a chapter number (1 or more), next or previous: \(arguments[0])",
                               command: parse.command)
            }
            return .seekchapter(target)
        },
    ]
}
