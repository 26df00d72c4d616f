import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.mp3Decoder.runOrTrap(data, count)
    return 0
}
