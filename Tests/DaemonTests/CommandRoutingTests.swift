import MPDProtocol
import Testing
@testable import DaemonCore

/// Dispatch looks a command's handler up by its kind: each command the daemon runs must have
/// exactly one handler, and the commands the session answers none.
@Suite struct CommandRoutingTests {
    @Test func everyCommandTheDaemonRunsHasExactlyOneHandler() {
        #expect(CommandDispatcher.routingProblems() == [])
        let listed = CommandDispatcher.handlerTypes.flatMap { $0.kinds }
        #expect(listed.count == Set(listed).count)
        #expect(Set(listed) == Set(Command.Kind.allCases.filter { !$0.isHandledBySession }))
    }
}
