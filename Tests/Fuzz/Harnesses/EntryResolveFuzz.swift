// libFuzzer harness: `ContentfulEntry(jsonData:)` over arbitrary bytes, then a resolve in
// JavaScriptCore through the same bridge calls the library makes (prepareEntry,
// prepareSelections, resolvePrepared), with selections naming every experience the entry has.
// Properties: never traps; every answer of the shared core is a compact resolution that maps back
// onto the Swift document (the library would otherwise log an error and render the baseline).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntryResolve(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let entry = try? ContentfulEntry(jsonData: bytes) else { return 0 }
    _ = entry.renderedBaseline
    let selections = FuzzBridge.selections(for: entry, variantIndex: size % 4)
    FuzzBridge.shared.resolveAndCheck(entry, selections)
    return 0
}
