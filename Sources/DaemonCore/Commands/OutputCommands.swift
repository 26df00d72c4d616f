import MPDProtocol
import QueuePlayer

/// The audio outputs and partitions (MPD's `OutputCommands.cxx`, `PartitionCommands.cxx`):
/// the outputs `--output` gave, one partition, `default`, which cannot be added to or deleted,
/// answered with MPD's errors.
struct OutputCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .outputs, .enableoutput, .disableoutput, .toggleoutput, .listpartitions, .partition, .outputset,
        .moveoutput, .newpartition, .delpartition,
    ]

    /// The outputs and their switches.
    let outputs: AudioOutputs
    /// The player, held or let go as outputs come and go.
    let holding: any PlayerHolding
    let events: ControlEvents

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        let holding = holding
        var reply = Reply()
        switch command {
        case .outputs:
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
            default: enable = !(outputs.outputs.indices.contains(id) && outputs.isEnabled(id))
            }
            let wasPlayable = holding.outputEnabled
            guard try outputs.setEnabled(enable, id: id) else { break }
            // With no output enabled the player cannot play: it holds its place. Others switch
            // without touching the player: the render thread applies it between two writes.
            if wasPlayable && !holding.outputEnabled {
                holding.player.pause()
            } else if !wasPlayable && holding.outputEnabled && holding.playState == .pause {
                holding.player.play()
            }
            events.post([.output])
        case .listpartitions:
            reply.append("partition", "default")
        case .partition(let name):
            guard name == "default" else { throw MPDError(.noExist, "partition does not exist") }
        case .outputset(let id, let name, _):
            guard outputs.outputs.indices.contains(id) else { throw MPDError.noSuchOutput }
            guard Self.isValidAttributeName(name) else { throw MPDError(.argument, "Illegal attribute name") }
            // No output here has runtime attributes (`outputs` lists none): MPD's answer for
            // an output plugin without them (its null, fifo and pipe outputs).
            throw MPDError(.argument, "Unsupported attribute")
        case .moveoutput(let name):
            // One partition holds every output: an output named so is already where the
            // client is, which MPD answers with OK.
            guard outputs.outputs.contains(where: { $0.name == name }) else {
                throw MPDError(.noExist, "No such output")
            }
        case .newpartition(let name):
            guard Self.isValidPartitionName(name) else { throw MPDError(.argument, "bad name") }
            guard name != "default" else { throw MPDError(.exist, "name already exists") }
            // One partition, one player, one queue: the daemon's limit is reached, and MPD
            // words it so when it reaches its own.
            throw MPDError(.unknown, "too many partitions")
        case .delpartition(let name):
            guard Self.isValidPartitionName(name) else { throw MPDError(.argument, "bad name") }
            guard name != "default" else { throw MPDError(.unknown, "cannot delete the default partition") }
            throw MPDError(.noExist, "no such partition")
        default:
            return nil
        }
        return reply
    }

    /// MPD's `IsValidAttributeName`: letters, digits and `_`, at least one.
    static func isValidAttributeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
    }

    /// MPD's `IsValidPartitionName`: letters, digits, `-` and `_`, at least one.
    static func isValidPartitionName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
