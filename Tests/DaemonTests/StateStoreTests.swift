import DaemonState
import Foundation
import Testing
@testable import DaemonCore
@testable import DaemonAssembly

/// The state file: atomic, and never a reason not to start.
@Suite struct StateStoreTests {
    func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("state-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aSavedStateLoadsBackAndLeavesNoTemporaryFile() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = StateStore(file: directory.appendingPathComponent("queueplayerd/state.json"))
        #expect(store.load() == .none)
        let state = SavedState(queue: ["/music/a.mp3", "/music/b.mp3"], current: 1, position: 12.5, paused: true)
        try store.save(state)
        #expect(store.load() == .loaded(state))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("queueplayerd").path)
        #expect(names == ["state.json"])
        var newer = state
        newer.position = 13
        try store.save(newer)
        #expect(store.load() == .loaded(newer))
    }

    @Test func aCorruptOrFutureFileIsMovedAside() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("state.json")
        let store = StateStore(file: file)
        for (contents, expected) in [("{ not json", "cannot be read"), (#"{"version": 99, "queue": [], "position": 0, "paused": false}"#, "newer")] {
            try contents.write(to: file, atomically: true, encoding: .utf8)
            guard case .movedAside(let reason, let aside) = store.load() else {
                Issue.record("\(contents) was not moved aside")
                continue
            }
            #expect(reason.contains(expected), "\(reason)")
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(try String(contentsOfFile: aside, encoding: .utf8) == contents)
            try FileManager.default.removeItem(atPath: aside)
        }
        #expect(store.load() == .none)
    }

    /// A full device: the temporary file is /dev/full (a symbolic link planted where the store
    /// writes it). The error names the real reason, and the old state stays as it was.
    @Test func aFullDeviceIsReportedAsSuchAndTheOldStateIsKept() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = StateStore(file: directory.appendingPathComponent("state.json"))
        let old = SavedState(queue: ["/music/a.mp3"], current: 0, position: 1, paused: false)
        try store.save(old)
        let temporary = directory.appendingPathComponent(".state.json.\(getpid()).tmp")
        try FileManager.default.createSymbolicLink(atPath: temporary.path, withDestinationPath: "/dev/full")
        // A stale errno from an earlier failed call must not be what is reported.
        errno = ENOENT
        var new = old
        new.position = 2
        #expect {
            try store.save(new)
        } throws: { error in
            let text = "\(error)"
            return text.contains("No space left on device")
                && text.contains(temporary.path) && !text.contains("No such file or directory")
        }
        #expect(store.load() == .loaded(old))
    }

    @Test func theDefaultFileFollowsXDGStateHome() {
        #expect(StateStore.defaultFile(environment: ["XDG_STATE_HOME": "/x/state"]).path == "/x/state/queueplayerd/state.json")
        #expect(StateStore.defaultFile(environment: [:]).path.hasSuffix("/.local/state/queueplayerd/state.json"))
        // systemd's StateDirectory= names the directory itself.
        #expect(StateStore.defaultFile(environment: ["STATE_DIRECTORY": "/s/queueplayerd", "XDG_STATE_HOME": "/x"]).path
                == "/s/queueplayerd/state.json")
    }

    /// `$HOME` (absolute) is the home directory of every default path, as the XDG base directory
    /// rules and mpd have it; the passwd entry's only when `HOME` is unset or not a path.
    @Test func defaultPathsFollowHOME() throws {
        let environment = ["HOME": "/some/dir"]
        #expect(StateStore.defaultFile(environment: environment).path == "/some/dir/.local/state/queueplayerd/state.json")
        #expect(StickerFileChoice.besideState.file(stateDirectory: nil, environment: environment)?.path
                == "/some/dir/.local/state/queueplayerd/sticker.sql")
        #expect(ConfigurationFile.defaultPath(environment: environment) == "/some/dir/.config/queueplayerd/queueplayerd.toml")
        let file = try ConfigurationFile(path: "/etc/q.toml", text: "socket = \"~/q.sock\"\nfiles = [\"~\", \"~/a.mp3\"]\n",
                                         environment: environment)
        #expect(file.settings[\.socket] == "/some/dir/q.sock")
        #expect(file.settings[\.files] == ["/some/dir", "/some/dir/a.mp3"])
        // The XDG variables still win, and the control socket is under XDG_RUNTIME_DIR, not the home directory.
        #expect(StateStore.defaultFile(environment: ["HOME": "/some/dir", "XDG_STATE_HOME": "/x"]).path == "/x/queueplayerd/state.json")
        #expect(Daemon.defaultSocketPath(environment: ["HOME": "/some/dir", "XDG_RUNTIME_DIR": "/run/user/7"]) == "/run/user/7/queueplayerd.sock")
        #expect(!Daemon.defaultSocketPath(environment: environment).hasPrefix("/some/dir"))
        // Unset, empty or relative: the passwd entry's home directory.
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        try #require(getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0 && result != nil)
        let passwdHome = String(cString: entry.pw_dir)
        for unusable in [[:], ["HOME": ""], ["HOME": "relative/dir"]] {
            #expect(StateStore.defaultFile(environment: unusable).path
                    == URL(fileURLWithPath: passwdHome).appendingPathComponent(".local/state/queueplayerd/state.json").path, "\(unusable)")
        }
    }
}
