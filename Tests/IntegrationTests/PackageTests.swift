import Foundation
import TestSupport
import Testing

/// The Debian package (`make deb`), built from the debug build: a release build takes minutes,
/// and what the package checks (its contents, `Depends:` computed from the libraries linked,
/// lintian, installation into a scratch root, the units, the man pages, removal) does not depend
/// on the build. `scripts/check-deb .build/release/queueplayerd` checks the release package.
@Suite(.serialized) struct PackageTests {
    @Test func theDebianPackageInstallsRunsAndRemovesCleanly() throws {
        let check = try ChildProcess(program: TestMedia.repository.appendingPathComponent("scripts/check-deb").path,
                                     [ChildProcess.daemonPath])
        let status = check.wait(timeout: 600)
        let output = check.lines.map(\.text).joined(separator: "\n")
        #expect(status == 0, "scripts/check-deb failed:\n\(output)\n\(check.standardError)")
        #expect(output.contains("check-deb: the package is good"), "\(output)")
        print(output)
    }
}
