/// Small text helpers shared by the formatting code.
enum ProtocolText {
    /// Replaces line breaks so a value can never split one protocol line into two.
    static func singleLine(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else { return text }
        return String(text.map { $0 == "\n" || $0 == "\r" || $0 == "\r\n" ? " " : $0 })
    }
}
