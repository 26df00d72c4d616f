import Foundation

/// The names given to one batch of new downloads: each a path no file and no job has, the
/// episode's own name first, then `name (2).mp3`, `name (3).mp3`, ...
///
/// Linear in the batch: every directory a batch names into is listed once, and what is taken
/// (the files listed, the jobs' names, the names given so far) is one `Set`; the number to
/// try next is kept per name, so the 2,000th episode of one title does not try the 1,999
/// names before it. (Each try was a `fileExists` and a scan of every job: 2,000 same-titled
/// episodes took 23 s of the transfers queue, and a stop waited for it.)
///
/// A value used on one queue for one batch: the listings are a snapshot of that moment.
struct FileNameClaims {
    private let root: URL
    /// Relative paths taken: by a job, by a name given in this batch, or by a file listed.
    private var taken: Set<String>
    private var listed: Set<String> = []
    /// Per name asked for, the number its next ` (N)` try starts at.
    private var nextNumber: [String: Int] = [:]

    /// `root` is the music directory; `jobs` the relative paths the jobs already have.
    init(root: URL, jobs: Set<String>) {
        self.root = root
        taken = jobs
    }

    /// `path` (relative to the root), or the first free ` (N)` variant of it, now taken.
    mutating func claim(_ path: String) -> String {
        list((path as NSString).deletingLastPathComponent)
        var number = nextNumber[path] ?? 1
        var candidate = number == 1 ? path : Self.numbered(path, number)
        while !taken.insert(candidate).inserted {
            number += 1
            candidate = Self.numbered(path, number)
        }
        nextNumber[path] = number + 1
        return candidate
    }

    /// `path` with ` (number)` before its extension.
    static func numbered(_ path: String, _ number: Int) -> String {
        let base = (path as NSString).deletingPathExtension, ext = (path as NSString).pathExtension
        return ext.isEmpty ? "\(base) (\(number))" : "\(base) (\(number)).\(ext)"
    }

    /// Adds the names in `directory` (relative to the root) to what is taken, the first time
    /// it is asked for. A directory not there yet holds nothing.
    private mutating func list(_ directory: String) {
        guard listed.insert(directory).inserted else { return }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(directory).path)) ?? []
        let prefix = directory.isEmpty ? "" : directory + "/"
        for name in names { taken.insert(prefix + name) }
    }
}
