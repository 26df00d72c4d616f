import Foundation
import MPDProtocol
import QueuePlayer

/// Cover art (MPD's `FileCommands.cxx`): `albumart` sends the cover file of a song's
/// directory, `readpicture` the picture embedded in the song's ID3v2 tag, each in chunks of
/// at most the client's `binarylimit`, from the offset the client asks for.
///
/// Both read only inside the music directory: an absolute path elsewhere, `..`, or a
/// symbolic link that leads out of it is refused. A client reads a picture with one command
/// per chunk, so the last embedded picture read is kept (while its file is unchanged)
/// rather than parsed again for every chunk.
///
/// Confined to the partition's queue, as every handler is.
final class PictureCommands: CommandHandler {
    private unowned let partition: Partition
    /// The last embedded picture read, by file version; nil picture: the file has none.
    private var lastPicture: (path: String, modified: Int64, size: Int64, picture: ID3Picture?)?

    /// The cover files `albumart` looks for, in MPD 0.23's order.
    static let coverNames = ["cover.png", "cover.jpg", "cover.tiff", "cover.bmp"]

    init(partition: Partition) {
        self.partition = partition
    }

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        switch command {
        case .albumart(let uri, let offset):
            return try albumArt(uri, offset: offset, limit: context.binaryLimit)
        case .readpicture(let uri, let offset):
            return try embeddedPicture(uri, offset: offset, limit: context.binaryLimit)
        default:
            return nil
        }
    }

    private func albumArt(_ uri: String, offset: Int, limit: Int) throws(MPDError) -> Reply {
        let library = partition.library
        // MPD looks in the directory the URI names as its parent; the song need not exist.
        guard let song = library.path(of: uri) else { throw MPDError(.permission, "Access denied") }
        let directory = song.deletingLastPathComponent()
        for name in Self.coverNames {
            let cover = directory.appendingPathComponent(name).resolvingSymlinksInPath().standardizedFileURL
            guard library.contains(cover), let file = CoverFile(cover) else { continue }
            guard offset <= file.size else { throw MPDError(.argument, "Offset too large") }
            var reply = Reply()
            reply.append("size", file.size)
            reply.setBinary(file.read(at: offset, count: min(file.size - offset, limit)))
            return reply
        }
        throw MPDError(.noExist, "No file exists")
    }

    private func embeddedPicture(_ uri: String, offset: Int, limit: Int) throws(MPDError) -> Reply {
        let library = partition.library
        guard let path = library.path(of: uri) else { throw MPDError(.permission, "Access denied") }
        let song = path.resolvingSymlinksInPath().standardizedFileURL
        guard library.contains(song) else { throw MPDError(.permission, "Access denied") }
        var info = stat()
        guard stat(song.path, &info) == 0 else { throw MPDError(.noExist, "No such file") }
        let (modified, size) = (Int64(info.st_mtim.tv_sec), Int64(info.st_size))
        let picture: ID3Picture?
        if let last = lastPicture, last.path == song.path, last.modified == modified, last.size == size {
            picture = last.picture
        } else {
            do {
                picture = try ID3Picture.first(in: song)
            } catch {
                if case .fileNotFound = error.reason { throw MPDError(.noExist, "No such file") }
                throw MPDError(.noExist, "Failed to load file")
            }
            lastPicture = (song.path, modified, size, picture)
        }
        // No picture: an empty reply, as MPD gives.
        guard let picture else { return Reply() }
        guard offset <= picture.data.count else { throw MPDError(.argument, "Bad file offset") }
        var reply = Reply()
        reply.append("size", picture.data.count)
        if !picture.mimeType.isEmpty { reply.append("type", picture.mimeType) }
        reply.setBinary(Array(picture.data[offset..<min(picture.data.count, offset + limit)]))
        return reply
    }
}

/// A cover file opened for reading: only a regular file (opening a FIFO named `cover.jpg`
/// must not block the partition's queue, hence `O_NONBLOCK` and `fstat` before reading).
private final class CoverFile {
    private let descriptor: Int32
    let size: Int

    init?(_ url: URL) {
        descriptor = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            return nil
        }
        size = Int(info.st_size)
    }

    deinit { close(descriptor) }

    /// Up to `count` bytes from `offset` (fewer if the file shrank meanwhile).
    func read(at offset: Int, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { break }
            done += got
        }
        return Array(bytes.prefix(done))
    }
}
