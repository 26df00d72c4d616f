// swift-tools-version:6.0
import PackageDescription

// The libFuzzer drivers: one executable per target of FuzzTargets (in the root package).
// Built only by `make fuzz`, with `-sanitize=fuzzer,address`, in Fuzz/.build.
let driverDependencies: [Target.Dependency] = ["CFuzzerDriver", .product(name: "FuzzTargets", package: "queueplayerd")]

let package = Package(
    name: "queueplayerd-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "queueplayerd", path: ".."),
    ],
    targets: [
        .target(name: "CFuzzerDriver"),
        .executableTarget(name: "FuzzMPDSession", dependencies: driverDependencies),
        .executableTarget(name: "FuzzSavedState", dependencies: driverDependencies),
        .executableTarget(name: "FuzzMP3Decoder", dependencies: driverDependencies),
        .executableTarget(name: "FuzzGPSDReport", dependencies: driverDependencies),
    ],
    swiftLanguageModes: [.v6]
)
