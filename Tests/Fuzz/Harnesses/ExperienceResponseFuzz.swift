// libFuzzer harness: an Experience API response body, as the shared core receives it
// (`experienceApi.parseResponse`) and as Swift reads it (`SelectedOptimizations(jsonData:)`).
// Properties: never traps; what the core accepts converts to `SelectedOptimizations` and resolves
// a fixture entry to an answer that maps back onto the Swift document.

import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzExperienceResponse(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let swiftSide = try? SelectedOptimizations(jsonData: bytes)
    let bridge = FuzzBridge.shared
    guard let parsed = bridge.parseExperienceResponse(String(decoding: bytes, as: UTF8.self)) else { return 0 }
    guard let value = try? JSONValue(jsonText: parsed) else { fatalError("parseResponse gave invalid JSON: \(parsed.prefix(200))") }
    guard let accepted = value["data"]?["selectedOptimizations"] else { fatalError("parseResponse gave no selections") }
    let selections: SelectedOptimizations
    do {
        selections = try SelectedOptimizations(json: accepted)
    } catch {
        fatalError("selections accepted by the core are refused by Swift: \(error)")
    }
    if let swiftSide {
        precondition(swiftSide.selections.count == selections.selections.count, "Swift and the core disagree on the selections")
    }
    bridge.resolveAndCheck(bridge.fixtureEntry, selections)
    return 0
}
