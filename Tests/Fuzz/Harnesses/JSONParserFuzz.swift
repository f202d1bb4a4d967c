// libFuzzer harness: the JSON parser over arbitrary bytes.
// Properties: never traps; a parsed value prints (within the same depth bound) to text that
// parses back to an equal value, and printing that value again gives the same text; the tape
// scan (JSONTape) accepts the same texts as the parser and builds the same value from them.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    checkTapeAgreesWithParser(String(decoding: bytes, as: UTF8.self))
    guard let value = try? JSONValue(jsonData: bytes) else { return 0 }
    let text: String
    do {
        text = try value.jsonText()
    } catch {
        fatalError("a parsed value could not be printed: \(error)")
    }
    guard let again = try? JSONValue(jsonText: text) else { fatalError("printed text did not parse: \(text.prefix(200))") }
    precondition(again == value, "round trip changed the value: \(text.prefix(200))")
    precondition((try? again.jsonText()) == text, "printing is not stable: \(text.prefix(200))")
    return 0
}

private func checkTapeAgreesWithParser(_ text: String) {
    let parsed = try? JSONValue(jsonText: text)
    let tape = JSONTape.scan(text)
    precondition((tape != nil) == (parsed != nil), "scan and parser disagree on: \(text.prefix(200))")
    guard let tape, let parsed else { return }
    precondition((try? tape.value(of: JSONTape.rootNode).jsonText()) == (try? parsed.jsonText()), "the tape built another value: \(text.prefix(200))")
}
