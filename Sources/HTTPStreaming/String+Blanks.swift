/// What `trimmingCharacters(in: .whitespaces)` does, without Foundation (this module needs
/// only FoundationEssentials, which has no `CharacterSet`): the blanks removed from both ends,
/// scalar by scalar.
extension StringProtocol {
    var trimmingBlanks: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isBlank }),
              let last = scalars.lastIndex(where: { !$0.isBlank }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}

extension Unicode.Scalar {
    /// A member of Foundation's `CharacterSet.whitespaces` (CoreFoundation's list, not today's
    /// Unicode): the tab, the space separators (General Category Zs), and the zero width space,
    /// U+200B, which was one until Unicode 4.0.1.
    var isBlank: Bool {
        switch value {
        case 0x09, 0x20, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }
}
