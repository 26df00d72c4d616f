import Foundation

/// MP3 files with ID3v2 chapters written by mutagen (`CHAP` frames with `TIT2` and `WXXX`
/// subframes under a top-level, ordered `CTOC`), for the chapter tests of every target.
public enum ChapterFixtures {
    /// One chapter to write: times in milliseconds.
    public struct Entry: Sendable {
        public var id: String
        public var start: Int
        public var end: Int
        public var title: String
        public var url: String?

        public init(id: String, start: Int, end: Int, title: String, url: String? = nil) {
            self.id = id
            self.start = start
            self.end = end
            self.title = title
            self.url = url
        }
    }

    /// Adds `entries` as mutagen `CHAP` frames (listed in one top-level `CTOC` in their order)
    /// to the file at `url`, keeping its other frames, as ID3v2.`version`.
    public static func write(_ entries: [Entry], to url: URL, version: Int = 4) throws {
        let spec = entries.map { entry in
            [entry.id, String(entry.start), String(entry.end), entry.title, entry.url ?? ""].joined(separator: "\u{1F}")
        }.joined(separator: "\u{1E}")
        try TestMedia.run("/usr/bin/python3", ["-c", """
            import sys
            from mutagen import id3
            try:
                tag = id3.ID3(sys.argv[1])
            except id3.ID3NoHeaderError:
                tag = id3.ID3()
            ids = []
            for row in sys.argv[2].split("\\x1e") if sys.argv[2] else []:
                eid, start, end, title, url = row.split("\\x1f")
                subs = [id3.TIT2(encoding=3, text=[title])]
                if url:
                    subs.append(id3.WXXX(encoding=3, desc="", url=url))
                tag.add(id3.CHAP(element_id=eid, start_time=int(start), end_time=int(end), sub_frames=subs))
                ids.append(eid)
            tag.add(id3.CTOC(element_id="toc", flags=id3.CTOCFlags.TOP_LEVEL | id3.CTOCFlags.ORDERED,
                             child_element_ids=ids, sub_frames=[id3.TIT2(encoding=3, text=["Contents"])]))
            tag.save(sys.argv[1], v1=0, v2_version=int(sys.argv[3]))
            """, url.path, spec, String(version)])
    }
}
