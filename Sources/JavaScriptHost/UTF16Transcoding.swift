/// UTF-8 → UTF-16 for handing long strings to JavaScriptCore.
///
/// The JavaScriptCore this project links decodes `JSStringCreateWithUTF8CString` input one
/// character per (non-inlined) function call: about 4 ns a byte, 11 µs for a 2.9 KB entry, ASCII
/// included. This transcoder finds ASCII runs eight bytes at a time and widens each run in one
/// plain (vectorizable) loop; other characters are decoded inline. Input must be valid UTF-8,
/// which every Swift `String` is.
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
}
