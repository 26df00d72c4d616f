extension CommandTable {
    /// `sticker` (mpd's `{ "sticker", PERMISSION_ADMIN, 3, -1, handle_sticker }`): the table
    /// checks the count; the rest waits for the daemon (``StickerRequest``).
    static let stickerEntries: [Entry] = [
        entry(.sticker, "sticker", .between(3, nil), .admin, [.expensive]) { arguments, _ throws(MPDError) in .sticker(arguments) },
    ]
}
