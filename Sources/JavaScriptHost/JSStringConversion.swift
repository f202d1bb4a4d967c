import CJavaScriptCore
import Foundation

// Conversions between Swift strings and JSStringRef. Internal to this module.

/// Strings at least this long (in UTF-8 bytes) are handed over as UTF-16 (``UTF16Transcoding``);
/// shorter ones (keys, ids) as UTF-8, which JavaScriptCore stores as compact 8-bit strings when
/// they are ASCII.
let utf16HandOverThreshold = 128

/// Creates a JSStringRef holding exactly `string` (embedded U+0000 included). Caller releases.
func makeJSString(_ string: String) -> JSStringRef {
    // withCString would stop at the first NUL, so a string holding one goes through UTF-16 too.
    if string.utf8.count < utf16HandOverThreshold, !string.utf8.contains(0) {
        return string.withCString { JSStringCreateWithUTF8CString($0) }
    }
    var string = string
    return string.withUTF8 { bytes in
        withUnsafeTemporaryAllocation(of: UInt16.self, capacity: bytes.count) { buffer in
            let written = UTF16Transcoding.transcode(bytes, into: buffer.baseAddress.unsafelyUnwrapped)
            return JSStringCreateWithCharacters(buffer.baseAddress, written)
        }
    }
}

/// Runs `body` with a temporary JSStringRef for `string`.
@inline(__always)
func withJSString<Result>(_ string: String, _ body: (JSStringRef) throws -> Result) rethrows -> Result {
    let reference = makeJSString(string)
    defer { JSStringRelease(reference) }
    return try body(reference)
}

/// The exact text of a JSStringRef (lone surrogates become U+FFFD).
func swiftString(_ reference: JSStringRef) -> String {
    let length = JSStringGetLength(reference)
    guard length > 0, let characters = JSStringGetCharactersPtr(reference) else { return "" }
    return UTF16Transcoding.utf8(UnsafeBufferPointer(start: characters, count: length))
}

/// Faster conversion for well-formed text such as `JSON.stringify` output (no lone surrogates).
func swiftStringViaUTF8(_ reference: JSStringRef) -> String {
    let capacity = JSStringGetMaximumUTF8CStringSize(reference)
    guard capacity > 1 else { return "" }
    return String(unsafeUninitializedCapacity: capacity) { buffer in
        let written = buffer.withMemoryRebound(to: CChar.self) {
            JSStringGetUTF8CString(reference, $0.baseAddress, capacity)
        }
        return written > 0 ? written - 1 : 0
    }
}
