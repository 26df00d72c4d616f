import MPDProtocol

/// The client's own standing (MPD's `ClientCommands.cxx`): `password`.
struct ClientCommands: CommandHandler {
    unowned let partition: Partition

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        switch command {
        case .password(let candidate):
            var reply = Reply()
            reply.grant(try partition.access.check(password: candidate, peer: context.peer))
            return reply
        default:
            return nil
        }
    }
}
