import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.mpdSession.runOrTrap(data, count)
    return 0
}
