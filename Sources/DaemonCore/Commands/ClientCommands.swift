import MPDProtocol

/// The client's own standing (MPD's `ClientCommands.cxx`): `password`; and `kill` (MPD's
/// `OtherCommands.cxx`, admin only), which stops the daemon on SIGTERM's path (the state
/// saved, the audio played out) and closes the connection without a reply, as MPD does.
struct ClientCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .password, .kill,
    ]

    /// The passwords.
    let access: AccessPolicy
    /// What `kill` stops.
    let shutdown: any DaemonShutdown

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        switch command {
        case .password(let candidate):
            var reply = Reply()
            reply.grant(try access.check(password: candidate, peer: context.peer, client: context.clientID))
            return reply
        case .kill:
            shutdown.kill(askedBy: context.peer)
            var reply = Reply()
            reply.closeConnection()
            return reply
        default:
            return nil
        }
    }
}
