/// The stream size a LAME/Xing ("Xing" or "Info") tag records in an MP3's first frame.
///
/// libmpg123 reads the tag for the length and gapless trimming but does not say how many
/// bytes the tag announced. Those bytes tell a *truncated* file (it ends before the stream
/// the tag describes: refused) from a *damaged* one (all its bytes are there, some frames
/// do not decode, so it decodes shorter than announced: played, as libmpg123 resyncs).
enum XingTag {
    /// The stream size in bytes the tag announces (from its own frame to the end of the
    /// audio), and where that frame starts; nil if there is no readable tag. `read` gives
    /// `count` bytes of the file at an offset: only the frame's first bytes are read, not
    /// the ID3v2 tag before it (which may be hundreds of megabytes).
    static func streamSize(read: (_ offset: Int64, _ count: Int) -> [UInt8]?) -> (start: Int, bytes: Int)? {
        guard let head = read(0, 10) else { return nil }
        var start = 0
        if head.count == 10, head[0] == UInt8(ascii: "I"), head[1] == UInt8(ascii: "D"), head[2] == UInt8(ascii: "3") {
            // ID3v2: a syncsafe size after the 10-byte header, plus a footer if flagged.
            guard head[6...9].allSatisfy({ $0 < 0x80 }) else { return nil }
            let size = head[6...9].reduce(0) { $0 << 7 | Int($1) }
            start = 10 + size + (head[5] & 0x10 != 0 ? 10 : 0)
        }
        // Frame header, side information (at most 32 bytes), tag id, flags, frames, bytes.
        guard let bytes = read(Int64(start), 4 + 32 + 16), bytes.count == 4 + 32 + 16 else { return nil }
        guard bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else { return nil }
        let isMPEG1 = (bytes[1] >> 3) & 3 == 3
        let isMono = (bytes[3] >> 6) & 3 == 3
        let sideInformation = isMPEG1 ? (isMono ? 17 : 32) : (isMono ? 9 : 17)
        var offset = 4 + sideInformation
        let id = bytes[offset..<offset + 4]
        guard id.elementsEqual("Xing".utf8) || id.elementsEqual("Info".utf8) else { return nil }
        func word(at index: Int) -> Int { bytes[index..<index + 4].reduce(0) { $0 << 8 | Int($1) } }
        let flags = word(at: offset + 4)
        offset += 8
        if flags & 1 != 0 { offset += 4 }
        guard flags & 2 != 0 else { return nil }
        return (start, word(at: offset))
    }

    /// True if a file that decodes to `frames` of the `announcedFrames` is cut off: it is short
    /// of the bytes the tag counts by about as much as it is short of samples. A damaged file
    /// has all its bytes; a flipped bit in the tag itself makes the two shortfalls disagree.
    static func isCutOff(fileSize: Int64, tag: (start: Int, bytes: Int), frames: Int64, announcedFrames: Int64) -> Bool {
        let missingBytes = Double(Int64(tag.start + tag.bytes) - fileSize)
        guard missingBytes > 0, announcedFrames > 0 else { return false }
        let expected = Double(tag.bytes) * Double(announcedFrames - frames) / Double(announcedFrames)
        // Bit rates vary along a VBR stream: agreeing within a factor of four is agreeing.
        return missingBytes >= expected / 4 && missingBytes <= expected * 4
    }
}
