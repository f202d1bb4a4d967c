import CoreMetrics
import Crypto
import Foundation
import OptimizationJSON
import Synchronization
import HostPlatform

/// Seals a JSON value into a signed, expiring, cookie-safe text, and opens such a text again only
/// when it is intact, signed by one of the keys, made for the same purpose, and not expired.
///
/// **Wire format, version 1** (every character is in `A–Z a–z 0–9 - _ .`, so the text is a valid
/// cookie value and needs no escaping in HTML attributes, URLs or JSON):
///
/// ```
/// v1.<payload>.<mac>
/// payload = base64url, unpadded, of the UTF-8 of {"exp":<ms since the Unix epoch>,"v":<value>}
/// mac     = base64url, unpadded, of HMAC-SHA256(key, "v1" NUL <purpose> NUL <payload>)  (43 characters)
/// ```
///
/// The purpose is not in the text but in what is signed, so a value sealed for one purpose (say,
/// visitor state) never opens as another (say, a replay ticket). `exp` is the seal time plus the
/// codec's lifetime on its clock; a value opens while the clock is before `exp`.
///
/// **Opening never trusts a bad value.** A value that is too long, malformed, of another version,
/// signed by no listed key or for another purpose, or expired opens as nil: treat it as absent.
/// The MAC is checked before the payload is decoded, with a comparison whose time does not depend
/// on where the bytes differ. Each refusal is counted in ``rejectedCount`` and in the swift-metrics
/// counter `optimization_visitor_state_rejected_total` with the dimensions `purpose` (the codec's
/// purpose) and `reason` (`malformed`, `signature` or `expired`).
///
/// **Cost.** The HMAC of each key is keyed and fed `"v1" NUL <purpose> NUL` once, when the codec
/// is created; sealing and opening copy that state and feed it only the payload's characters,
/// read in place. Sealing writes the payload's base64url straight into the result (one
/// allocation); opening decodes it straight into the string the reader keeps (one allocation)
/// and parses it there. ``VisitorStateCodec`` indexes it there instead (`JSONTape`, recording
/// only the state's members), so that the selections are kept as the text that was sealed, not
/// built.
///
/// A value type; copies share their count. Thread-safe: seal and open from any thread.
public struct SignedValueCodec: Sendable {
    /// The version prefix of sealed values.
    public static let version = "v1"

    /// What every sealed value is bound to (part of what is signed).
    public let purpose: String
    /// How long a sealed value opens, from its sealing (clamped to 1 ms … 100 years).
    public let lifetime: Duration
    /// The longest text ``open(_:)`` reads, in UTF-8 bytes; a longer one is refused unread.
    public let maximumLength: Int
    /// One per key, signing key first: the HMAC already fed the signed prefix.
    let macs: [PreparedMAC]
    let clock: any HostClock
    private let lifetimeMilliseconds: Int64
    let rejections: Rejections

    /// Creates a codec.
    /// - Parameters:
    ///   - keys: the first signs; all verify.
    ///   - purpose: what the values are for (for example `visitor-state`); values sealed for
    ///     another purpose do not open.
    ///   - lifetime: how long a sealed value opens; clamped to 1 ms … 100 years.
    ///   - maximumLength: the longest text ``open(_:)`` reads, in UTF-8 bytes (at least 1); default 16 KiB.
    ///   - clock: the time of sealing and expiry (milliseconds since the Unix epoch); default
    ///     `SystemClock` (wall-clock time, so replicas and restarts agree).
    ///   - metricsFactory: receives `optimization_visitor_state_rejected_total`; nil (the
    ///     default) uses `MetricsSystem.factory`.
    public init(
        keys: VisitorStateKeys,
        purpose: String,
        lifetime: Duration,
        maximumLength: Int = 16_384,
        clock: any HostClock = SystemClock(),
        metricsFactory: (any MetricsFactory)? = nil
    ) {
        var prefix = Array(Self.version.utf8)
        prefix.append(0)
        prefix.append(contentsOf: purpose.utf8)
        prefix.append(0)
        macs = keys.keys.map { PreparedMAC(key: $0, prefix: prefix) }
        self.purpose = purpose
        self.clock = clock
        self.maximumLength = max(1, maximumLength)
        let milliseconds = Self.milliseconds(lifetime)
        lifetimeMilliseconds = milliseconds
        self.lifetime = .milliseconds(milliseconds)
        rejections = Rejections(purpose: purpose, factory: metricsFactory ?? MetricsSystem.factory)
    }

    /// The sealed text of `value`, signed with the first key, expiring ``lifetime`` from now.
    /// - Throws: `JSONError` when `value` is nested too deeply to be written as JSON.
    public func seal(_ value: JSONValue) throws(JSONError) -> String {
        seal(valueText: try value.jsonText())
    }

    /// Seals JSON text already written (compact, valid JSON: the caller's promise).
    ///
    /// One allocation for the text (plus swift-crypto's copies of the prepared HMAC state): the
    /// payload's JSON is base64url-encoded straight into the result as it is written, and the
    /// HMAC reads the payload's characters there.
    ///
    /// With `opened`, the value a text opened (``OpenedPayload``): when the new payload differs
    /// from that text's payload only in the expiry's digits (same `valueText`, as many digits),
    /// the base64url of the part after them is copied from that text instead of encoded again.
    /// The result is the same text either way (base64url encodes each group of three bytes on
    /// its own, and an opened text's encoding is the only one of its bytes); only the expiry's
    /// groups are encoded and, as always, the whole payload is signed anew.
    func seal(valueText: String, reusing opened: OpenedPayload? = nil) -> String {
        let now = clock.now()
        let nowMilliseconds = now.isFinite ? Int64(min(max(now, 0), 1e15).rounded(.down)) : 0
        let expiry = nowMilliseconds + lifetimeMilliseconds
        var valueText = valueText
        return valueText.withUTF8 { value in
            // `{"exp":` digits `,"v":` value `}`
            var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 24 digits; an Int64 has at most 19
            return withUnsafeMutableBytes(of: &digits) { digitBytes in
                let digitCount = Self.writeDecimal(expiry, into: digitBytes)
                let digitPointer = UnsafeBufferPointer(start: digitBytes.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self), count: digitCount)
                let payloadByteCount = Self.expiryOpening.utf8CodeUnitCount + digitCount + Self.valueOpening.utf8CodeUnitCount + value.count + 1
                let payloadLength = Base64URL.encodedLength(payloadByteCount)
                let macLength = Base64URL.encodedLength(SHA256.byteCount)
                let length = 3 + payloadLength + 1 + macLength
                return String(unsafeUninitializedCapacity: length) { output in
                    let base = output.baseAddress.unsafelyUnwrapped
                    base[0] = UInt8(ascii: "v")
                    base[1] = UInt8(ascii: "1")
                    base[2] = UInt8(ascii: ".")
                    if !(opened?.copyUnchangedEncoding(digits: digitPointer, value: value, into: base + 3) ?? false) {
                        var encoder = Base64URL.Encoder(base + 3)
                        encoder.append(UnsafeBufferPointer(start: Self.expiryOpening.utf8Start, count: Self.expiryOpening.utf8CodeUnitCount))
                        encoder.append(digitPointer)
                        encoder.append(UnsafeBufferPointer(start: Self.valueOpening.utf8Start, count: Self.valueOpening.utf8CodeUnitCount))
                        encoder.append(value)
                        encoder.append(UInt8(ascii: "}"))
                        encoder.finish()
                    }
                    let mac = macs[0].authenticationCode(for: UnsafeRawBufferPointer(start: base + 3, count: payloadLength))
                    base[3 + payloadLength] = UInt8(ascii: ".")
                    var macEncoder = Base64URL.Encoder(base + 4 + payloadLength)
                    mac.withUnsafeBytes { macEncoder.append($0.assumingMemoryBound(to: UInt8.self)) }
                    macEncoder.finish()
                    return length
                }
            }
        }
    }

    static let expiryOpening: StaticString = #"{"exp":"#
    static let valueOpening: StaticString = #","v":"#

    /// Writes the decimal digits of `value` (not negative) at the start of `buffer`; their count.
    private static func writeDecimal(_ value: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var remaining = UInt64(max(0, value))
        var count = 0
        repeat {
            count += 1
            remaining /= 10
        } while remaining > 0
        remaining = UInt64(max(0, value))
        var index = count
        repeat {
            index -= 1
            buffer[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
            remaining /= 10
        } while index > 0
        return count
    }

    /// The value sealed in `text`, or nil (counted) when `text` is too long, malformed, of another
    /// version, not signed by a listed key for this purpose, or expired.
    public func open(_ text: String) -> JSONValue? {
        openWithExpiry(text)?.value
    }

    /// ``open(_:)``, with the seal's expiry: when the value stops opening, in milliseconds since
    /// the Unix epoch on the codec's clock.
    public func openWithExpiry(_ text: String) -> (value: JSONValue, expiresAt: Double)? {
        switch verify(text) {
        case .success(let opened):
            return opened
        case .failure(let reason):
            rejections.record(reason)
            return nil
        }
    }

    /// Whether a value whose seal expires at `expiresAt` (from ``openWithExpiry(_:)``) has less
    /// than half the codec's ``lifetime`` left on its clock: time to seal it again.
    public func isRenewalDue(expiresAt: Double) -> Bool {
        expiresAt - clock.now() < Double(lifetimeMilliseconds) / 2
    }

    /// How many values ``open(_:)`` refused since this codec was created (copies share it).
    public var rejectedCount: Int {
        rejections.total
    }

    /// Counts a value the caller refused after it opened (for example, a payload of the wrong
    /// shape), as `malformed`.
    func recordMalformed() {
        rejections.record(.malformed)
    }

    /// `duration` in whole milliseconds, clamped to 1 ms … 100 years.
    private static func milliseconds(_ duration: Duration) -> Int64 {
        let hundredYears = 100 * 366 * 24 * 3600 * 1000
        return Int64(min(hundredYears, max(1, duration.wholeMilliseconds)))
    }

    /// The HMAC-SHA256 of one key, already keyed and fed the signed prefix
    /// (`"v1" NUL <purpose> NUL`): an authentication code costs a copy of it and the payload.
    ///
    /// `@unchecked Sendable` because swift-crypto declares no `Sendable` conformances (its
    /// `HMAC` holds its digest state in a copy-on-write reference). Sharing it between threads is
    /// safe: `state` is a `let` that is never mutated; every use copies it and feeds the copy,
    /// and a copy's `update` first copies the shared digest state (it is not uniquely referenced
    /// while `state` holds it), so concurrent uses only read the shared state and count
    /// references to it atomically.
    struct PreparedMAC: @unchecked Sendable {
        private let state: HMAC<SHA256>

        init(key: SymmetricKey, prefix: [UInt8]) {
            var state = HMAC<SHA256>(key: key)
            state.update(data: prefix)
            self.state = state
        }

        /// HMAC-SHA256(key, prefix ‖ `payload`).
        func authenticationCode(for payload: UnsafeRawBufferPointer) -> HMAC<SHA256>.MAC {
            var mac = state
            mac.update(data: payload)
            return mac.finalize()
        }
    }

    /// The refusals of one codec and its copies.
    final class Rejections: Sendable {
        private let count = Atomic<Int>(0)
        private let counters: [Reason: Counter]

        init(purpose: String, factory: any MetricsFactory) {
            counters = Dictionary(uniqueKeysWithValues: Reason.allCases.map {
                ($0, Counter(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", purpose), ("reason", $0.rawValue)], factory: factory))
            })
        }

        func record(_ reason: Reason) {
            count.add(1, ordering: .relaxed)
            counters[reason]?.increment()
        }

        var total: Int {
            count.load(ordering: .relaxed)
        }
    }
}
