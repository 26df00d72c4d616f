import MPDProtocol
import QueuePlayer

/// The daemon's audio outputs as `outputs` lists them: ids (their order on the command line),
/// names, plugins, and which are enabled. Owned by the partition's queue.
///
/// With several outputs, switching one is a bit in the ``MultiOutputSink`` the render thread
/// reads at its next write: the others play on without a gap and the position is kept. With
/// one output there is nothing to switch it to, so disabling it pauses the player instead
/// (``Partition/outputEnabled``), as before several outputs existed.
package final class AudioOutputs {
    struct Output {
        var name: String
        var plugin: String
    }

    let outputs: [Output]
    private let multiple: MultiOutputSink?
    /// The single output's switch (with several, the sink's bits are the truth).
    private var singleEnabled = true

    init(outputs: [Output], switch multiple: MultiOutputSink?) {
        precondition(multiple == nil || multiple!.outputs.count == outputs.count)
        self.outputs = outputs
        self.multiple = multiple
    }

    func isEnabled(_ id: Int) -> Bool {
        multiple?.isEnabled(output: id) ?? singleEnabled
    }

    /// True if any output is enabled: with none, the player holds its place.
    var anyEnabled: Bool { outputs.indices.contains { isEnabled($0) } }

    /// Enables or disables output `id`; returns false if it already was.
    func setEnabled(_ on: Bool, id: Int) throws(MPDError) -> Bool {
        guard outputs.indices.contains(id) else { throw MPDError.noSuchOutput }
        guard isEnabled(id) != on else { return false }
        if let multiple { multiple.setEnabled(on, output: id) } else { singleEnabled = on }
        return true
    }

    /// Which outputs are enabled, by name, for the saved state.
    var savedSwitches: [String: Bool] {
        Dictionary(outputs.indices.map { (outputs[$0].name, isEnabled($0)) }, uniquingKeysWith: { first, _ in first })
    }

    /// Puts back the saved switches of outputs that still exist (by name); others keep theirs.
    func restore(_ switches: [String: Bool]) {
        for (id, output) in outputs.enumerated() {
            if let on = switches[output.name] { _ = try? setEnabled(on, id: id) }
        }
    }
}
