// swift-tools-version:6.0
import PackageDescription

// The libFuzzer drivers: one executable per target of FuzzTargets (in the root package).
// Built only by `make fuzz`, with `-sanitize=fuzzer,address -parse-as-library`, in Fuzz/.build.
let package = Package(
    name: "queueplayerd-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "queueplayerd", path: ".."),
    ],
    targets: [
        .executableTarget(name: "FuzzMPDSession", dependencies: [.product(name: "FuzzTargets", package: "queueplayerd")]),
        .executableTarget(name: "FuzzSavedState", dependencies: [.product(name: "FuzzTargets", package: "queueplayerd")]),
        .executableTarget(name: "FuzzMP3Decoder", dependencies: [.product(name: "FuzzTargets", package: "queueplayerd")]),
    ],
    swiftLanguageModes: [.v6]
)
