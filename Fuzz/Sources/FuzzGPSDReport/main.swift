import CFuzzerDriver
import FuzzTargets
#if canImport(Glibc)
import Glibc
#endif

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.gpsdReport.runOrTrap(data, count)
    return 0
}

// SwiftPM links every executable with a main of its own (this file's top-level code),
// so libFuzzer runs through its driver entry rather than its own main.
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
