/// What the connection handler must do, in order, after feeding a ``ClientSession``.
public enum SessionAction: Hashable, Sendable {
    /// Write these bytes (UTF-8 text; lines end in `\n`).
    case send(String)
    /// Write these bytes as they are: the payload of a binary reply (`albumart`,
    /// `readpicture`), which is not text, followed by its `\n`.
    case sendBytes([UInt8])
    /// Close the connection after writing everything sent before. Nothing follows a `close`.
    case close
}
