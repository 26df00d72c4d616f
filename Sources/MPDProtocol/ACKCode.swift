/// The numeric error codes mpd puts in `ACK [code@index]`.
///
/// The numbers are libmpdclient's `enum mpd_server_error` (protocol.h); clients such as
/// mpc and python-mpd2 only look at the number, so it must match mpd exactly.
public enum ACKCode: Int, Sendable, Hashable, CaseIterable {
    /// `ACK_ERROR_NOT_LIST`: a command that needs a command list was sent outside one.
    case notList = 1
    /// `ACK_ERROR_ARG`: wrong argument count or a malformed argument.
    case argument = 2
    /// `ACK_ERROR_PASSWORD`: wrong password.
    case password = 3
    /// `ACK_ERROR_PERMISSION`: the client lacks the permission for the command.
    case permission = 4
    /// `ACK_ERROR_UNKNOWN`: unknown command, tokenizer errors, and some odd cases (`setvol` without mixer).
    case unknown = 5
    /// `ACK_ERROR_NO_EXIST`: the song, directory, playlist or output does not exist.
    case noExist = 50
    /// `ACK_ERROR_PLAYLIST_MAX`: the queue is full.
    case playlistMax = 51
    /// `ACK_ERROR_SYSTEM`: an operating-system level failure.
    case system = 52
    /// `ACK_ERROR_PLAYLIST_LOAD`: a stored playlist could not be loaded.
    case playlistLoad = 53
    /// `ACK_ERROR_UPDATE_ALREADY`: a database update could not be queued.
    case updateAlready = 54
    /// `ACK_ERROR_PLAYER_SYNC`: the player is not in a state that allows the command (`Not playing`).
    case playerSync = 55
    /// `ACK_ERROR_EXIST`: the object to be created already exists.
    case exist = 56
}
