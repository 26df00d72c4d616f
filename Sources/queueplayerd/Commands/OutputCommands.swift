import MPDProtocol

/// The audio outputs and partitions (MPD's `OutputCommands.cxx`, `PartitionCommands.cxx`):
/// one output, one partition.
struct OutputCommands: CommandHandler {
    unowned let controller: PlaybackController

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        let controller = controller
        var reply = Reply()
        switch command {
        case .outputs:
            reply.append("outputid", 0)
            reply.append("outputname", controller.outputDescription.name)
            reply.append("plugin", controller.outputDescription.plugin)
            reply.append("outputenabled", controller.outputEnabled ? 1 : 0)
        case .enableoutput(let id), .disableoutput(let id):
            guard id == 0 else { throw MPDError.noSuchOutput }
            let enable: Bool
            if case .enableoutput = command { enable = true } else { enable = false }
            guard enable != controller.outputEnabled else { break }
            controller.outputEnabled = enable
            // With its only output disabled the player cannot play: it holds its place.
            if !enable { controller.player.pause() } else if controller.playState == .pause { controller.player.play() }
            controller.events.post([.output])
        case .listpartitions:
            reply.append("partition", "default")
        case .partition(let name):
            guard name == "default" else { throw MPDError(.noExist, "partition does not exist") }
        default:
            return nil
        }
        return reply
    }
}
