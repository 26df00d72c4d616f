import CMPG123
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An open MP3 file that libmpg123 reads through (`mpg123_replace_reader_handle`),
/// 64 KiB at a time.
///
/// libmpg123's own reader makes two `read` calls per MPEG frame (header, then
/// body): about 14,000 system calls for three minutes of audio, for every scan
/// and every decode. Reading through this buffer takes one `pread` per 64 KiB.
/// The buffer is allocated when the file is opened; reading allocates nothing,
/// so the render thread may decode through it.
///
/// An ID3v2 tag over a megabyte is not shown to libmpg123 as it is: libmpg123 reads a tag
/// whole into memory, and a 250 MB picture in it would cost 250 MB at every open (the library
/// update's, the player's). libmpg123 reads instead a tag rebuilt of the frames it parses
/// (``ID3v2Tag/slimmed(_:)``), then the file from the tag's end on; its offsets are those of
/// that view, which it alone uses. ``read(at:count:)`` and ``identity`` are the file's own.
///
/// Owner: its decoder's thread of the moment (the opener, then the render thread); reached
/// only through that decoder's libmpg123 handle, whose calls ``MPG123Decoder`` checks.
final class BufferedFile: @unchecked Sendable {
    private let descriptor: Int32
    private let buffer: UnsafeMutableRawPointer
    private let capacity = 64 * 1024
    /// The offset of `buffer[0]` in libmpg123's view of the file, and how many bytes from there it holds.
    private var bufferStart: Int64 = 0
    private var bufferCount = 0
    /// Where libmpg123's next read starts, in its view of the file (see ``view``).
    private var position: Int64 = 0
    /// What libmpg123 is shown in place of the file's first `tagEnd` bytes; nil: the file as it
    /// is. Chosen when libmpg123 first opens the file.
    private var view: (head: [UInt8], tagEnd: Int64)?
    private var viewChosen = false

    /// What identifies this version of the file, for ``ScanCache``.
    let identity: FileIdentity

    init(descriptor: Int32, info: stat) {
        self.descriptor = descriptor
        identity = FileIdentity(info)
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        close(descriptor)
        buffer.deallocate()
    }

    /// Opens the file at `url` for reading, refusing what cannot be an MP3 item.
    ///
    /// The file is opened with `O_NONBLOCK` and checked with `fstat` before anything else:
    /// a plain `open(2)` of a FIFO waits for a writer, which would hang whichever thread
    /// opens it (the controller's queue during `add`, the player's loader) and with it the
    /// daemon. Only a regular file is accepted; then `O_NONBLOCK` is cleared, so reads of
    /// the file behave as usual.
    static func open(_ url: URL) throws(DecoderError) -> BufferedFile {
        let fd = Glibc.open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { throw DecoderError(url: url, reason: .fileNotFound) }
            throw DecoderError(url: url, reason: .unreadable(String(cString: strerror(errno))))
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw DecoderError(url: url, reason: .unreadable(reason))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            break
        case S_IFDIR:
            Glibc.close(fd)
            throw DecoderError(url: url, reason: .unreadable("it is a directory"))
        default:
            Glibc.close(fd)
            throw DecoderError(url: url, reason: .unreadable("not a regular file"))
        }
        if info.st_size == 0 {
            Glibc.close(fd)
            throw DecoderError(url: url, reason: .empty)
        }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw DecoderError(url: url, reason: .unreadable(reason))
        }
        return BufferedFile(descriptor: fd, info: info)
    }

    /// The first `count` bytes of the file (fewer if it is shorter), nil if it cannot be read.
    func prefix(_ count: Int) -> [UInt8]? {
        read(at: 0, count: count)
    }

    /// `count` bytes of the file from `offset` (fewer at its end), nil if it cannot be read.
    /// The file's own bytes, whatever libmpg123 is shown; independent of its reading.
    func read(at offset: Int64, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { return nil }
            if got == 0 { break }
            done += got
        }
        if done < count { bytes.removeLast(count - done) }
        return bytes
    }

    /// Opens `handle` (whose reader was replaced with ``read`` and ``seek``) on this file, from its start.
    func open(_ handle: OpaquePointer) -> Bool {
        if !viewChosen {
            view = ID3v2Tag.slimmed(self)
            viewChosen = true
        }
        position = 0
        return mpg123_open_handle(handle, Unmanaged.passUnretained(self).toOpaque()) == MPG123_OK.rawValue
    }

    /// The bytes of libmpg123's view before the file's own continue (the rebuilt tag's length).
    private var headCount: Int64 { Int64(view?.head.count ?? 0) }

    /// Where in the file libmpg123's view continues at `position` (at or past ``headCount``).
    private func fileOffset(_ position: Int64) -> Int64 {
        guard let view else { return position }
        return position - Int64(view.head.count) + view.tagEnd
    }

    /// libmpg123's read callback: like `read(2)`.
    static let read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int) -> Int = { context, destination, count in
        guard let context, let destination else { return -1 }
        return Unmanaged<BufferedFile>.fromOpaque(context).takeUnretainedValue().read(into: destination, count: count)
    }

    /// libmpg123's seek callback: like `lseek(2)`.
    static let seek: @convention(c) (UnsafeMutableRawPointer?, off_t, Int32) -> off_t = { context, offset, whence in
        guard let context else { return -1 }
        return off_t(Unmanaged<BufferedFile>.fromOpaque(context).takeUnretainedValue().seek(Int64(offset), whence: whence))
    }

    private func read(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        var copied = 0
        if let head = view?.head, position < Int64(head.count) {
            let chunk = min(count, head.count - Int(position))
            head.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + Int(position), byteCount: chunk) }
            copied = chunk
            position += Int64(chunk)
        }
        while copied < count {
            if position < bufferStart || position >= bufferStart + Int64(bufferCount) {
                let refilled = refill()
                if refilled < 0 { return copied > 0 ? copied : -1 }
                if refilled == 0 { break }
            }
            let offset = Int(position - bufferStart)
            let chunk = min(count - copied, bufferCount - offset)
            (destination + copied).copyMemory(from: buffer + offset, byteCount: chunk)
            copied += chunk
            position += Int64(chunk)
        }
        return copied
    }

    /// Reads the block at `position`; returns its length (0 at the end of the file, -1 on error).
    private func refill() -> Int {
        while true {
            let got = pread(descriptor, buffer, capacity, off_t(fileOffset(position)))
            if got < 0 && errno == EINTR { continue }
            bufferStart = position
            bufferCount = max(0, got)
            return got
        }
    }

    private func seek(_ offset: Int64, whence: Int32) -> Int64 {
        let base: Int64
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END:
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { return -1 }
            base = max(0, Int64(info.st_size) - (view?.tagEnd ?? 0)) + headCount
        default:
            errno = EINVAL
            return -1
        }
        guard base + offset >= 0 else {
            errno = EINVAL
            return -1
        }
        position = base + offset
        return position
    }
}

/// One version of one file: the same path rewritten is another version. Times in nanoseconds
/// since 1970. Shared within the package: the daemon's song index keys its details on it, as
/// ``ScanCache`` keys its scans.
package struct FileIdentity: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    package let modified: Int64
    package let changed: Int64

    /// The version of the file at `path` now (`stat(2)`); nil if it cannot be read.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    package init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }
}

/// What scanning a file found: its exact decoded length, and the length its LAME/Xing tag announces.
struct ScanResult: Sendable {
    let length: Int64
    let announced: Int64?
}

/// Scan results by file version, so an unchanged file is scanned once per process:
/// when it is added to the queue (its song details), not again when it is opened to
/// play, re-opened after a seek or `next`, or queued once more.
final class ScanCache: Sendable {
    private let results = Mutex<[FileIdentity: ScanResult]>([:])
    private let limit: Int

    init(limit: Int = 4096) {
        self.limit = limit
    }

    func result(for identity: FileIdentity) -> ScanResult? {
        results.withLock { $0[identity] }
    }

    func remember(_ result: ScanResult, for identity: FileIdentity) {
        results.withLock { results in
            if results.count >= limit { results.removeAll(keepingCapacity: true) }
            results[identity] = result
        }
    }
}

extension MPG123Decoder {
    static let scans = ScanCache()
    /// Scans of files decoded to a forced output format: their length is in that format's frames.
    private static let forcedScans = Mutex<[AudioFormat: ScanCache]>([:])

    /// The cache for decodes to `outputFormat` (nil: each file's own format).
    static func scans(for outputFormat: AudioFormat?) -> ScanCache {
        guard let outputFormat else { return scans }
        return forcedScans.withLock { caches in
            if let cache = caches[outputFormat] { return cache }
            let cache = ScanCache()
            caches[outputFormat] = cache
            return cache
        }
    }
}
