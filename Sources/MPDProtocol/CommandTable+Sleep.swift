extension CommandTable {
    /// The sleep timer and the items kept part-heard: not mpd's, named in its style. Setting
    /// the timer needs `player`, as `pause` does; the list of items needs `read`.
    static let sleepEntries: [Entry] = [
        entry(.sleep, "sleep", .exactly(1), .player) { arguments, parse throws(MPDError) in
            guard let request = SleepRequest(argument: arguments[0]) else {
                throw MPDError(.argument, SleepRequest.problem(with: arguments[0]), command: parse.command)
            }
            return .sleep(request)
        },
        simple("inprogress", .read, .inprogress, [.expensive, .listReply]),
    ]
}
