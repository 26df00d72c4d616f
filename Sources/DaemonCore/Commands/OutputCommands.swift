import MPDProtocol

/// The audio outputs and partitions (MPD's `OutputCommands.cxx`, `PartitionCommands.cxx`):
/// the outputs `--output` gave, one partition.
struct OutputCommands: CommandHandler {
    unowned let partition: Partition

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        let partition = partition
        var reply = Reply()
        switch command {
        case .outputs:
            let outputs = partition.outputs
            for (id, output) in outputs.outputs.enumerated() {
                reply.append("outputid", id)
                reply.append("outputname", output.name)
                reply.append("plugin", output.plugin)
                reply.append("outputenabled", outputs.isEnabled(id) ? 1 : 0)
            }
        case .enableoutput(let id), .disableoutput(let id), .toggleoutput(let id):
            let enable: Bool
            switch command {
            case .enableoutput: enable = true
            case .disableoutput: enable = false
            default: enable = !(partition.outputs.outputs.indices.contains(id) && partition.outputs.isEnabled(id))
            }
            let wasPlayable = partition.outputEnabled
            guard try partition.outputs.setEnabled(enable, id: id) else { break }
            // With no output enabled the player cannot play: it holds its place. Others switch
            // without touching the player: the render thread applies it between two writes.
            if wasPlayable && !partition.outputEnabled {
                partition.player.pause()
            } else if !wasPlayable && partition.outputEnabled && partition.playState == .pause {
                partition.player.play()
            }
            partition.events.post([.output])
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
