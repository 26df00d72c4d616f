#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import MPDProtocol
import QueuePlayer

/// Cover art (MPD's `FileCommands.cxx`): `albumart` sends the cover file of a song's
/// directory, or of a folder (`albumart "Artist - Album/" 0`, as Cantata asks), `readpicture` the picture embedded in the song's ID3v2 tag, each in chunks of
/// at most the client's `binarylimit`, from the offset the client asks for.
///
/// Both read only inside the music directory: an absolute path elsewhere, `..`, or a
/// symbolic link that leads out of it is refused. An absolute path is a local file, which
/// only a client on the Unix socket may name (``refuseLocalFile(_:isLocal:)``), as mpd 0.23
/// answers both: a remote client must not learn where the music directory is. A client reads a picture with one command
/// per chunk, so where the last embedded picture lies is kept (while its file is the same
/// version) rather than looked for again for every chunk; its bytes are not kept: each call
/// reads its chunk from the file with one `pread`, so a 250 MB picture costs a call no more
/// than its chunk, and a client that asks for two big pictures in turn costs no copies.
///
/// Confined to the partition's queue, as every handler is.
final class PictureCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .albumart, .readpicture,
    ]

    /// Where the pictures are.
    private let library: MusicLibrary
    /// The last file looked in, by version, and where its picture lies (nil: it has none).
    private var lastPicture: (path: String, version: FileIdentity, picture: ID3Picture?)?

    /// The cover files `albumart` looks for, in MPD 0.23's order (its `find_stream_art`):
    /// the first that opens is sent.
    static let coverNames = ["cover.png", "cover.jpg", "cover.webp"]

    init(library: MusicLibrary) {
        self.library = library
    }

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        switch command {
        case .albumart(let uri, let offset):
            return try albumArt(uri, offset: offset, limit: context.binaryLimit, isLocal: context.isLocal)
        case .readpicture(let uri, let offset):
            return try embeddedPicture(uri, offset: offset, limit: context.binaryLimit, isLocal: context.isLocal)
        default:
            return nil
        }
    }

    private func albumArt(_ uri: String, offset: Int, limit: Int, isLocal: Bool) throws(MPDError) -> Reply {
        let directory = try coverDirectory(of: uri, isLocal: isLocal)
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

    /// The directory whose cover `albumart URI` sends. MPD takes the parent of the URI, so a
    /// song's (which need not exist) is its directory, and a folder with a trailing `/`
    /// (Cantata's `"Artist - Album/"`) is that folder. A folder named without the `/` is taken
    /// as that folder too (MPD would look in its parent): a client that means the folder gets
    /// its cover. Nothing outside the music directory is read; covers that link out of it are
    /// skipped by the caller. The refusals are mpd 0.23's: an absolute path is a local file,
    /// which a client that is not on the Unix socket may not name (`ACK [4] Access denied`,
    /// even inside the music directory); any other name that leads nowhere in the music
    /// directory (`..`, `./`, an absolute path elsewhere from a local client) has no cover
    /// (`ACK [50] No file exists`).
    private func coverDirectory(of uri: String, isLocal: Bool) throws(MPDError) -> URL {
        try Self.refuseLocalFile(uri, isLocal: isLocal)
        var named = Substring(uri)
        let isFolder = named.hasSuffix("/")
        while named.count > 1 && named.hasSuffix("/") { named.removeLast() }
        guard let path = named == library.root.path ? library.root : library.path(of: String(named)) else {
            throw MPDError(.noExist, "No file exists")
        }
        if isFolder || named.isEmpty { return path }
        var info = stat()
        if stat(path.path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR { return path }
        return path.deletingLastPathComponent()
    }

    /// mpd's `Client::AllowFile`: an absolute path names a local file, which a client that is
    /// not on the Unix socket may not name, even inside the music directory (`ACK [4] Access
    /// denied`): the answer would tell it where the music directory is.
    private static func refuseLocalFile(_ uri: String, isLocal: Bool) throws(MPDError) {
        if uri.hasPrefix("/") && !isLocal { throw MPDError(.permission, "Access denied") }
    }

    private func embeddedPicture(_ uri: String, offset: Int, limit: Int, isLocal: Bool) throws(MPDError) -> Reply {
        try Self.refuseLocalFile(uri, isLocal: isLocal)
        guard let path = library.path(of: uri) else { throw MPDError(.permission, "Access denied") }
        let song = path.resolvingSymlinksInPath().standardizedFileURL
        guard library.contains(song) else { throw MPDError(.permission, "Access denied") }
        guard let version = FileIdentity(path: song.path) else { throw MPDError(.noExist, "No such file") }
        let picture: ID3Picture?
        if let last = lastPicture, last.path == song.path, last.version == version {
            picture = last.picture
        } else {
            do {
                picture = try ID3Picture.first(in: song)
            } catch {
                throw Self.mpdError(error)
            }
            lastPicture = (song.path, version, picture)
        }
        // No picture: an empty reply, as MPD gives.
        guard let picture else { return Reply() }
        guard offset <= picture.length else { throw MPDError(.argument, "Bad file offset") }
        let chunk: [UInt8]
        do {
            chunk = try picture.read(from: song, at: offset, count: limit)
        } catch {
            throw Self.mpdError(error)
        }
        var reply = Reply()
        reply.append("size", picture.length)
        if !picture.mimeType.isEmpty { reply.append("type", picture.mimeType) }
        reply.setBinary(chunk)
        return reply
    }

    /// MPD's replies for a song file that cannot be read.
    private static func mpdError(_ error: DecoderError) -> MPDError {
        if case .fileNotFound = error.reason { return MPDError(.noExist, "No such file") }
        return MPDError(.noExist, "Failed to load file")
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
