import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `.part` file of one download attempt, kept open from the first byte appended until the
/// attempt ends (``close()``), so each chunk of the body is one write. (It was opened, sought to
/// its end, written and closed again for every chunk, with its directory made and its existence
/// checked first: thousands of times for an hour-long episode.)
///
/// Owned by the downloader's I/O queue (`queueplayerd.transfers.io`), which every method
/// asserts: one call at a time, and the order of the calls is the order they were queued.
final class PartFile: @unchecked Sendable {
    let url: URL
    private let queue: DispatchQueue
    private var handle: FileHandle?

    init(url: URL, queue: DispatchQueue) {
        self.url = url
        self.queue = queue
    }

    /// Appends `bytes` at the end, making the file (and its directory) with the first.
    func append(_ bytes: Data) throws {
        dispatchPrecondition(condition: .onQueue(queue))
        if handle == nil {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: url.path) {
                guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                    throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
                }
            }
            let opened = try FileHandle(forWritingTo: url)
            do {
                try opened.seekToEnd()
            } catch {
                try? opened.close()
                throw error
            }
            handle = opened
        }
        try handle?.write(contentsOf: bytes)
    }

    /// Makes what was written durable (`fsync`). Throws if the file was removed or replaced
    /// while it was open (by hand, with its directory): what was written went to a file that is
    /// no longer there, so the attempt must be tried again, not taken as finished.
    func synchronize() throws {
        dispatchPrecondition(condition: .onQueue(queue))
        if let handle {
            try handle.synchronize()
            var written = stat()
            var named = stat()
            guard fstat(handle.fileDescriptor, &written) == 0, written.st_nlink > 0, stat(url.path, &named) == 0,
                  written.st_dev == named.st_dev, written.st_ino == named.st_ino else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path,
                                                             NSLocalizedDescriptionKey: "\(url.lastPathComponent) was removed while it was written"])
            }
            return
        }
        let opened = try FileHandle(forWritingTo: url)
        defer { try? opened.close() }
        try opened.synchronize()
    }

    /// Empties the file, to start it over (a file not there yet is empty). Throws when it cannot:
    /// bytes written after the old ones would splice two bodies together.
    func truncate() throws {
        dispatchPrecondition(condition: .onQueue(queue))
        close()
        guard Glibc.truncate(url.path, 0) == 0 || errno == ENOENT else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    /// Removes the file.
    func remove() {
        dispatchPrecondition(condition: .onQueue(queue))
        close()
        try? FileManager.default.removeItem(at: url)
    }

    /// Closes the file, if it is open. The attempt is over.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        try? handle?.close()
        handle = nil
    }
}
