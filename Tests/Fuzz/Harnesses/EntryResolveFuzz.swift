// libFuzzer harness: `ContentfulEntry(jsonData:)` over arbitrary bytes, then a resolve in
// JavaScriptCore through the same bridge calls the library makes (prepareEntry,
// prepareSelections, resolvePrepared), with selections naming every experience the entry has.
// Properties: never traps; an entry parsed from text renders what the same document built as a
// value renders, at every location tried; every answer of the shared core is a compact resolution that maps back
// onto the Swift document (the library would otherwise log an error and render the baseline).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntryResolve(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let entry = try? ContentfulEntry(jsonData: bytes) else { return 0 }
    checkParsedEntryMatchesValueBuiltEntry(entry)
    let selections = FuzzBridge.selections(for: entry, variantIndex: size % 4)
    FuzzBridge.shared.resolveAndCheck(entry, selections)
    return 0
}

private func checkParsedEntryMatchesValueBuiltEntry(_ entry: ContentfulEntry) {
    guard let built = try? ContentfulEntry(json: entry.document, entryId: entry.isCollection ? entry.id : nil) else {
        fatalError("a parsed entry's document was refused as a value")
    }
    precondition(built.id == entry.id && built.baseline == entry.baseline, "another baseline")
    precondition(built.renderedBaseline == entry.renderedBaseline, "another rendered baseline")
    for experience in 0..<3 {
        for variant in 0..<3 {
            let location = EntryLocation.variant(experience: experience, variant: variant)
            precondition(built.renderedEntry(at: location) == entry.renderedEntry(at: location), "another variant at \(location)")
        }
    }
}
