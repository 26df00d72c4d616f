// swift-tools-version:6.0
import PackageDescription

/// What the daemon links, and the bench's memory floor (bench/floor) with it.
let daemonDependencies: [Target.Dependency] = [
    "CShims",
    "DaemonCore",
    "QueuePlayer",
    "AppLifecycle",
    "FeedFetch",
    .product(name: "Logging", package: "swift-log"),
]

let package = Package(
    name: "queueplayerd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "QueuePlayer", targets: ["QueuePlayer"]),
        .library(name: "HTTPStreaming", targets: ["HTTPStreaming"]),
        .library(name: "MPDProtocol", targets: ["MPDProtocol"]),
        .library(name: "DaemonCore", targets: ["DaemonCore"]),
        .executable(name: "queueplayerd", targets: ["queueplayerd"]),
        // For the fuzzers in Fuzz/, a package of their own so that the normal build does not pay for them.
        .library(name: "FuzzTargets", targets: ["FuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        // The configuration file's TOML (toml++ underneath): its parse errors carry the line.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // The web page and the WebSocket API: an HTTP server on the same swift-nio.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // The sticker database (mpd's `sticker_file`): SQLite, the system's libsqlite3 underneath.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // Thin C seams: each exposes one shim header and is found through pkg-config.
        .systemLibrary(
            name: "CALSA",
            pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]
        ),
        .systemLibrary(
            name: "CMPG123",
            pkgConfig: "libmpg123",
            providers: [.apt(["libmpg123-dev"])]
        ),
        // Playback rate: Sonic's time-stretcher (libsonic-dev, Apache-2.0), made for
        // speech. Debian ships no pkg-config file for it: its header is in the default path.
        .systemLibrary(name: "CSonic"),
        // Loudness: EBU R128 integrated loudness and true peak (libebur128-dev, MIT).
        .systemLibrary(
            name: "CEBUR128",
            pkgConfig: "libebur128",
            providers: [.apt(["libebur128-dev"])]
        ),
        // Zeroconf: `_mpd._tcp` published through the Avahi daemon (libavahi-client, D-Bus;
        // libavahi-client-dev). Its headers are in the default path; not found through
        // pkg-config, whose `-D_REENTRANT` SwiftPM would warn about on every build.
        .systemLibrary(name: "CAvahi"),
        // The variadic C calls Swift cannot make: the futex system call (the clock thread's
        // one-wait-per-deadline sleep) and snprintf (the `Background:` lines).
        .systemLibrary(name: "CShims"),

        // The engine: AVQueuePlayer's shape over libmpg123 and ALSA.
        .target(
            name: "QueuePlayer",
            dependencies: ["CALSA", "CMPG123", "CShims", "CSonic"]
        ),

        // Loudness measured: a file decoded through the engine's decoder into libebur128
        // (the only target that sees CEBUR128).
        .target(name: "Loudness", dependencies: ["QueuePlayer", "CEBUR128"]),

        // An AsyncHTTPClient client made at its first request, shut down only if made: nothing
        // of the HTTP stack entered, no event loop started, before a request needs it.
        .target(
            name: "LazyHTTP",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),

        // Network items: the HTTP(S) transport of a stream into QueuePlayer's
        // StreamBuffer (AsyncHTTPClient), ICY metadata, reconnection; its decoder factory.
        .target(
            name: "HTTPStreaming",
            dependencies: [
                "QueuePlayer",
                "LazyHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // The MPD protocol as pure functions: bytes to typed requests, typed replies to bytes.
        .target(name: "MPDProtocol"),

        // The iOS-style application life cycle: states, notifications, background tasks, suspension.
        .target(name: "AppLifecycle", dependencies: ["QueuePlayer"]),

        // What the daemon saves across restarts, and the validation of a saved file: pure, so it can be fuzzed.
        .target(name: "DaemonState"),

        // Podcast feeds as untrusted input: parsing (FoundationXML), the merge with what is
        // known, safe file names.
        .target(name: "Feeds"),

        // Background fetch of the subscribed feeds: the scheduling rules (pure), the HTTP seam
        // and its AsyncHTTPClient implementation, the subscriptions file, the saved records.
        .target(
            name: "FeedFetch",
            dependencies: [
                "Feeds",
                "LazyHTTP",
                "QueuePlayer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // Location updates shaped like Core Location: the manager, region monitoring,
        // the geometry, and the sources (gpsd over TCP, a scripted one for tests). Independent of the player.
        .target(name: "Location"),

        // Zeroconf: `_mpd._tcp` published through the Avahi daemon; the only target that sees
        // libavahi's C types (CAvahi), which it loads at run time rather than linking.
        .target(name: "Zeroconf", dependencies: ["CAvahi", .product(name: "Logging", package: "swift-log")]),

        // mpd's sticker database in SQLite through GRDB: the only target that sees GRDB.
        .target(name: "Stickers", dependencies: ["MPDProtocol", .product(name: "GRDB", package: "GRDB.swift"),
                                                 .product(name: "NIOPosix", package: "swift-nio")]),

        // The daemon as a library: the partition (queue, player, mixer, options), the command
        // layer, the control server, the saved state, the life cycle, the feeds, systemd.
        .target(
            name: "DaemonCore",
            dependencies: [
                "QueuePlayer",
                "HTTPStreaming",
                "AppLifecycle",
                "MPDProtocol",
                "DaemonState",
                "Feeds",
                "FeedFetch",
                "Location",
                "CShims",
                "Zeroconf",
                "Stickers",
                "Loudness",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ],
            // The web page's files, compiled into the binary (an installed daemon is one file).
            resources: [
                .embedInCode("Web/Resources/index.html"),
                .embedInCode("Web/Resources/app.js"),
                .embedInCode("Web/Resources/style.css"),
            ]
        ),

        // The executable: the command line and the configuration file, then DaemonCore.
        .executableTarget(
            name: "queueplayerd",
            dependencies: daemonDependencies
        ),

        // The floors under the bench's tick, peak RSS and start-up (bench/floor/main.swift): linked as the daemon is,
        // doing next to nothing, or playing a file through libmpg123 and alsa-lib called directly, or ticking.
        .executableTarget(
            name: "queueplayerd-floor",
            dependencies: daemonDependencies + ["CALSA", "CMPG123"],
            path: "bench/floor"
        ),

        // Fixtures shared by the test targets: the sample media, tone synthesis, a reference decoder
        // (libmpg123 called directly), processes, raw MPD clients and their polls.
        .target(name: "TestSupport", dependencies: ["QueuePlayer", "CMPG123", .product(name: "Logging", package: "swift-log")],
                path: "Tests/TestSupport"),
        // Counts each thread's calls of malloc in the test process (it defines malloc).
        .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
        .testTarget(name: "QueuePlayerTests", dependencies: ["QueuePlayer", "TestSupport", "AllocationCounter"]),
        .testTarget(name: "HTTPStreamingTests", dependencies: ["HTTPStreaming", "QueuePlayer", "TestSupport", "CMPG123", "AllocationCounter"]),
        .testTarget(name: "LazyHTTPTests", dependencies: ["LazyHTTP", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                                                         .product(name: "NIOPosix", package: "swift-nio")]),
        .testTarget(name: "MPDProtocolTests", dependencies: ["MPDProtocol"]),
        .testTarget(name: "AppLifecycleTests", dependencies: ["AppLifecycle", "QueuePlayer", "TestSupport"]),
        .testTarget(name: "DaemonTests", dependencies: ["DaemonCore", "Loudness", "DaemonState", "MPDProtocol", "QueuePlayer", "TestSupport", "Zeroconf", "Stickers",
                                                      .product(name: "NIOCore", package: "swift-nio"),
                                                      .product(name: "NIOHTTP1", package: "swift-nio"),
                                                      .product(name: "NIOEmbedded", package: "swift-nio")]),
        .testTarget(name: "LocationTests", dependencies: ["Location", "TestSupport"]),
        .testTarget(name: "FeedsTests", dependencies: ["Feeds"], exclude: ["Fixtures"]),
        .testTarget(name: "FeedFetchTests", dependencies: ["FeedFetch", "Feeds", "QueuePlayer", "TestSupport"]),
        // The whole daemon inside the test process (Support/InProcessDaemon.swift): what needs no process boundary.
        .testTarget(name: "DaemonInProcessTests", dependencies: ["DaemonCore", "MPDProtocol", "QueuePlayer", "TestSupport",
                                                               .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "IntegrationTests", dependencies: ["QueuePlayer", "CMPG123", "TestSupport", "Location"], exclude: ["Scripts", "Transcripts"]),

        // The fuzzed entry points (Fuzz/README.md), and the replay of their corpora and crashers.
        .target(name: "FuzzTargets", dependencies: ["MPDProtocol", "QueuePlayer", "DaemonState", "Location"], path: "Fuzz/Targets"),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets", "DaemonState"]),
    ],
    swiftLanguageModes: [.v6]
)
// A file sees only the members of the modules it imports itself (MemberImportVisibility), so a
// file that imports FoundationEssentials cannot use Foundation's extensions (`String(format:)`,
// `trimmingCharacters`) through another file's import: what needs the full Foundation says so.
// (On this toolchain Glibc's `stat` and `timespec` resolve through libdispatch's C module, so the
// files that read their fields import `CDispatch` too.)
for target in package.targets where [.regular, .executable].contains(target.type) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}

