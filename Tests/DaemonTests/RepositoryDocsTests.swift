import Foundation
import TestSupport
import Testing

/// What the repository promises about itself: every dependency's licence is listed
/// (docs/licences.md), the README stays a front door, the documentation's links stay inside the
/// repository, docs/ARCHITECTURE.md's module table says what Package.swift says, and source
/// comments cite no issue numbers.
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
        let avahi = try Self.text("Sources/Zeroconf/AvahiLibrary.swift")
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

    /// The package as SwiftPM reads it (`swift package dump-package`), read once: its targets
    /// and what each depends on, by name (a target's or a product's).
    static let manifest: Result<[String: (type: String, dependencies: Set<String>)], any Error> = Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // A scratch path of its own, never made: the manifest alone is read, without waiting for a
        // build's lock on .build.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("dump-package-\(UUID().uuidString)")
        process.arguments = ["swift", "package", "--package-path", repository.path, "--scratch-path", scratch.path, "dump-package"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let package = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let targets = package["targets"] as? [[String: Any]] else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "swift package dump-package failed (\(process.terminationStatus))"])
        }
        var result: [String: (type: String, dependencies: Set<String>)] = [:]
        for target in targets {
            guard let name = target["name"] as? String, let type = target["type"] as? String else { continue }
            // Each dependency is `{"byName": [name, condition]}`, `{"target": [...]}` or `{"product": [name, package, ...]}`.
            let dependencies = (target["dependencies"] as? [[String: [Any]]] ?? []).compactMap { $0.values.first?.first as? String }
            result[name] = (type, Set(dependencies))
        }
        return result
    }

    /// docs/ARCHITECTURE.md's module table, by its rows' first backquoted name: the backquoted
    /// names of its "imports" and "never imports" cells.
    static func moduleTable() throws -> [String: (imports: [String], never: [String])] {
        let text = try text("docs/ARCHITECTURE.md")
        let start = try #require(text.range(of: "| module | imports | never imports |\n"))
        var rows: [String: (imports: [String], never: [String])] = [:]
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard cells.count >= 4, let name = Self.quoted(cells[1]).first else { continue }
            rows[name] = (Self.quoted(cells[2]), Self.quoted(cells[3]))
        }
        return rows
    }

    static func quoted(_ cell: String) -> [String] {
        cell.matches(of: /`([^`]+)`/).map { String($0.output.1) }
    }

    /// Every target that is built into something (not the tests, not the C headers) has its row
    /// in the module table; each row's "imports" names exactly the target's dependencies in
    /// Package.swift (backquoted, by target or product name: other backquoted words, file names
    /// and types, are not names the package knows), and its "never imports" none of them.
    @Test func theModuleTableSaysWhatPackageSwiftSays() throws {
        let targets = try Self.manifest.get()
        let table = try Self.moduleTable()
        let known = Set(targets.keys).union(targets.values.flatMap(\.dependencies))
        let built = targets.filter { ["regular", "executable"].contains($0.value.type) }
        #expect(built.count > 15, "\(built.keys)")
        let missing = built.keys.filter { table[$0] == nil }.sorted()
        #expect(missing.isEmpty, "docs/ARCHITECTURE.md's module table has no row for \(missing)")
        let unknown = table.keys.filter { built[$0] == nil }.sorted()
        #expect(unknown.isEmpty, "docs/ARCHITECTURE.md's module table has rows for what Package.swift does not build: \(unknown)")
        for (name, target) in built.sorted(by: { $0.key < $1.key }) {
            guard let row = table[name] else { continue }
            let documented = Set(row.imports.filter(known.contains))
            let notInPackage = documented.subtracting(target.dependencies).sorted()
            let notInTable = target.dependencies.subtracting(documented).sorted()
            let forbidden = Set(row.never).intersection(target.dependencies).sorted()
            #expect(notInPackage.isEmpty, "\(name): the table says it imports \(notInPackage), Package.swift does not")
            #expect(notInTable.isEmpty, "\(name): Package.swift gives it \(notInTable), the table does not say so")
            #expect(forbidden.isEmpty, "\(name): the table says it never imports \(forbidden), Package.swift gives it them")
        }
    }
}
