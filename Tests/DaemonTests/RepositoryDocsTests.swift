import Foundation
import TestSupport
import Testing

/// What the repository promises about itself: every dependency's licence is listed
/// (docs/licences.md), the README stays a front door, the documentation's links stay inside the
/// repository, and source comments cite no issue numbers.
@Suite struct RepositoryDocsTests {
    static let repository = TestMedia.repository

    static func text(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// The names docs/licences.md lists: the backquoted first cell of every table row.
    static func listedNames() throws -> Set<String> {
        let rows = try text("docs/licences.md").split(separator: "\n").filter { $0.hasPrefix("| `") }
        return Set(rows.compactMap { row in row.firstMatch(of: /^\| `([^`]+)`/).map { String($0.output.1) } })
    }

    /// Every package `Package.resolved` pins has its licence listed.
    @Test func everyResolvedPackageHasItsLicenceListed() throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("Package.resolved"))
        let resolved = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let pins = try #require(resolved["pins"] as? [[String: Any]])
        let identities = pins.compactMap { $0["identity"] as? String }
        #expect(identities.count > 10, "\(identities)")
        let listed = try Self.listedNames()
        let missing = identities.filter { !listed.contains($0) }
        #expect(missing.isEmpty, "Package.resolved pins packages docs/licences.md does not list: \(missing)")
    }

    /// Every shared library the built daemon loads (`ldd`: what it names and what those load),
    /// in the debug build and, when one was made, the release build, has its licence listed.
    @Test func everyLinkedLibraryHasItsLicenceListed() throws {
        let listed = try Self.listedNames()
        var binaries = [ChildProcess.daemonPath]
        let release = Self.repository.appendingPathComponent(".build/release/queueplayerd").path
        if FileManager.default.isExecutableFile(atPath: release) { binaries.append(release) }
        for binary in binaries {
            let ldd = try ChildProcess(program: "/usr/bin/ldd", [binary])
            #expect(ldd.wait(timeout: 60) == 0, "\(ldd.standardError)")
            // `libasound.so.2 => /lib/...` or `/lib64/ld-linux-x86-64.so.2 (0x...)`: the name alone.
            let libraries = ldd.lines.compactMap { line -> String? in
                guard let first = line.text.split(separator: " ").first?.trimmingCharacters(in: .whitespaces),
                      !first.isEmpty else { return nil }
                return String(first.split(separator: "/").last ?? "")
            }
            #expect(libraries.contains("libasound.so.2") && libraries.contains("libmpg123.so.0"), "\(binary): \(libraries)")
            let missing = libraries.filter { !listed.contains($0) }
            #expect(missing.isEmpty, "\(binary) loads libraries docs/licences.md does not list: \(missing)")
        }
        // Loaded at run time, so ldd does not see it: the name the daemon opens.
        let avahi = try Self.text("Sources/DaemonCore/Zeroconf/AvahiLibrary.swift")
        let opened = try #require(avahi.firstMatch(of: /static let fileName = "([^"]+)"/)?.output.1)
        #expect(listed.contains(String(opened)), "\(opened) is loaded with dlopen and not listed")
    }

    /// The README is a front door: short, and without run logs.
    @Test func theReadmeIsAFrontDoor() throws {
        let readme = try Self.text("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 200, "README.md has \(lines) lines")
        for heading in ["## The two commands", "## A five-minute tour", "## Where to read on"] {
            #expect(readme.contains(heading + "\n"), "README.md lacks \(heading)")
        }
        #expect(readme.contains("make run") && readme.contains("make test"))
        #expect(!readme.contains("| # | figure |"), "the benchmark table belongs in docs/performance.md")
        #expect(FileManager.default.fileExists(atPath: Self.repository.appendingPathComponent("LICENSE").path))
    }

    /// Every link of the documentation leads to a file of the repository (or a heading of
    /// one): none to another site or to a path outside the repository.
    @Test func theDocumentationLinksStayInsideTheRepository() throws {
        var pages = ["README.md", "bench/results/history.md"]
        let docs = Self.repository.appendingPathComponent("docs")
        pages += try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        // Generated from the settings schema (`make man`); linked before it exists in a branch.
        let generated: Set<String> = ["docs/settings.md"]
        var checked = 0
        for page in pages {
            let text = try Self.text(page)
            let directory = URL(fileURLWithPath: page).deletingLastPathComponent().relativePath
            for match in text.matches(of: /\]\(([^)\s]+)\)/) {
                let target = String(match.output.1)
                checked += 1
                #expect(!target.contains("://") && !target.hasPrefix("/") && !target.hasPrefix("mailto:"),
                        "\(page) links outside the repository: \(target)")
                if target.contains("://") || target.hasPrefix("/") || target.hasPrefix("#") { continue }
                let path = String(target.split(separator: "#", maxSplits: 1)[0])
                let resolved = URL(fileURLWithPath: directory == "." ? path : directory + "/" + path,
                                   relativeTo: Self.repository).standardizedFileURL
                #expect(resolved.path.hasPrefix(Self.repository.standardizedFileURL.path + "/"),
                        "\(page) links outside the repository: \(target)")
                let relative = String(resolved.path.dropFirst(Self.repository.standardizedFileURL.path.count + 1))
                #expect(FileManager.default.fileExists(atPath: resolved.path) || generated.contains(relative),
                        "\(page) links to \(target), which does not exist")
            }
        }
        #expect(checked > 20)
    }

    /// Comments say what and why: no comment in Sources/ or Package.swift cites an issue number.
    @Test func sourceCommentsCiteNoIssueNumbers() throws {
        var files = [Self.repository.appendingPathComponent("Package.swift")]
        let sources = Self.repository.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let url as URL in walker where ["swift", "c", "h", "js", "css", "html"].contains(url.pathExtension) {
            files.append(url)
        }
        var citing: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("//") || line.trimmingCharacters(in: .whitespaces).hasPrefix("*") {
                let comment = line.contains("//") ? String(line[line.range(of: "//")!.lowerBound...]) : String(line)
                if comment.contains(/(?i)\b(issue|bench row) [0-9]+/) {
                    citing.append("\(file.lastPathComponent):\(number + 1): \(comment)")
                }
            }
        }
        #expect(files.count > 100)
        #expect(citing.isEmpty, "comments citing issues or bench rows: \(citing)")
    }
}
