// libFuzzer harness: `SelectedOptimizations(jsonData:)` over arbitrary bytes (an Experience API
// envelope or a bare array). Properties: never traps; accepted selections re-read from their own
// JSON text are equal, with the same content key.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSelectedOptimizations(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let selections = try? SelectedOptimizations(jsonData: bytes) else { return 0 }
    guard let again = try? SelectedOptimizations(jsonData: Array(selections.jsonText.utf8)) else {
        fatalError("accepted selections did not re-read: \(selections.jsonText.prefix(200))")
    }
    precondition(again == selections && again.cacheKey == selections.cacheKey)
    precondition(again.selections.count == selections.selections.count)
    return 0
}
