/// UTF-8 ⇄ UTF-16 for long strings crossing to and from JavaScriptCore.
///
/// The JavaScriptCore this project links decodes `JSStringCreateWithUTF8CString` input one
/// character per (non-inlined) function call: about 4 ns a byte, 11 µs for a 2.9 KB entry, ASCII
/// included. This transcoder finds ASCII runs eight bytes at a time and widens each run in one
/// plain (vectorizable) loop; other characters are decoded inline. Input must be valid UTF-8,
/// which every Swift `String` is. The other direction (``utf8(_:)``) narrows ASCII runs the same
/// way; the standard library's `String(decoding:as: UTF16.self)` decodes one scalar at a time
/// through a generic parser.
enum UTF16Transcoding {
    /// Writes the UTF-16 of `utf8` to `target` (room for `utf8.count` units, always enough) and
    /// returns how many units it wrote.
    static func transcode(_ utf8: UnsafeBufferPointer<UInt8>, into target: UnsafeMutablePointer<UInt16>) -> Int {
        guard let base = utf8.baseAddress else { return 0 }
        let count = utf8.count
        let raw = UnsafeRawPointer(base)
        var read = 0
        var written = 0
        while read < count {
            var runEnd = read
            while runEnd + 8 <= count, raw.loadUnaligned(fromByteOffset: runEnd, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                runEnd += 8
            }
            while runEnd < count, base[runEnd] < 0x80 { runEnd += 1 }
            if runEnd > read {
                let run = runEnd - read
                let source = base + read
                let destination = target + written
                for offset in 0..<run { destination[offset] = UInt16(source[offset]) }
                read = runEnd
                written += run
                continue
            }
            let lead = base[read]
            if lead < 0xE0 {
                target[written] = UInt16(lead & 0x1F) << 6 | UInt16(base[read + 1] & 0x3F)
                read += 2
            } else if lead < 0xF0 {
                target[written] = UInt16(lead & 0x0F) << 12 | UInt16(base[read + 1] & 0x3F) << 6 | UInt16(base[read + 2] & 0x3F)
                read += 3
            } else {
                let scalar = UInt32(lead & 0x07) << 18 | UInt32(base[read + 1] & 0x3F) << 12
                    | UInt32(base[read + 2] & 0x3F) << 6 | UInt32(base[read + 3] & 0x3F)
                let offset = scalar &- 0x10000
                target[written] = UInt16(truncatingIfNeeded: 0xD800 + (offset >> 10))
                written += 1
                target[written] = UInt16(truncatingIfNeeded: 0xDC00 + (offset & 0x3FF))
                read += 4
            }
            written += 1
        }
        return written
    }

    /// The string of the UTF-16 units `utf16`. A lone surrogate becomes U+FFFD, as
    /// `String(decoding:as: UTF16.self)` repairs it, so the result is the same string.
    static func utf8(_ utf16: UnsafeBufferPointer<UInt16>) -> String {
        guard let base = utf16.baseAddress, !utf16.isEmpty else { return "" }
        let count = utf16.count
        // At most 3 UTF-8 bytes per unit (a surrogate pair: 4 bytes for 2 units).
        return String(unsafeUninitializedCapacity: count * 3) { target in
            let out = target.baseAddress.unsafelyUnwrapped
            var read = 0
            var written = 0
            while read < count {
                var runEnd = read
                while runEnd + 4 <= count,
                      UnsafeRawPointer(base + runEnd).loadUnaligned(as: UInt64.self) & 0xFF80_FF80_FF80_FF80 == 0 {
                    runEnd += 4
                }
                while runEnd < count, base[runEnd] < 0x80 { runEnd += 1 }
                if runEnd > read {
                    let run = runEnd - read
                    let source = base + read
                    let destination = out + written
                    for offset in 0..<run { destination[offset] = UInt8(truncatingIfNeeded: source[offset]) }
                    read = runEnd
                    written += run
                    continue
                }
                let unit = UInt32(base[read])
                read += 1
                var scalar = unit
                if unit & 0xF800 == 0xD800 {
                    if unit < 0xDC00, read < count, base[read] & 0xFC00 == 0xDC00 {
                        scalar = 0x10000 + ((unit - 0xD800) << 10) + (UInt32(base[read]) - 0xDC00)
                        read += 1
                    } else {
                        scalar = 0xFFFD
                    }
                }
                if scalar < 0x800 {
                    out[written] = UInt8(truncatingIfNeeded: 0xC0 | scalar >> 6)
                    out[written + 1] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
                    written += 2
                } else if scalar < 0x10000 {
                    out[written] = UInt8(truncatingIfNeeded: 0xE0 | scalar >> 12)
                    out[written + 1] = UInt8(truncatingIfNeeded: 0x80 | (scalar >> 6) & 0x3F)
                    out[written + 2] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
                    written += 3
                } else {
                    out[written] = UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18)
                    out[written + 1] = UInt8(truncatingIfNeeded: 0x80 | (scalar >> 12) & 0x3F)
                    out[written + 2] = UInt8(truncatingIfNeeded: 0x80 | (scalar >> 6) & 0x3F)
                    out[written + 3] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
                    written += 4
                }
            }
            return written
        }
    }
}
