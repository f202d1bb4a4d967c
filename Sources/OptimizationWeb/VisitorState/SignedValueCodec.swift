import CoreMetrics
import Crypto
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
    private let keys: VisitorStateKeys
    private let clock: any HostClock
    private let lifetimeMilliseconds: Int64
    private let rejections: Rejections

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
        self.keys = keys
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
    func seal(valueText: String) -> String {
        let now = clock.now()
        let nowMilliseconds = now.isFinite ? Int64(min(max(now, 0), 1e15).rounded(.down)) : 0
        let expiry = nowMilliseconds + lifetimeMilliseconds
        let payload = Base64URL.encode(Array("{\"exp\":\(expiry),\"v\":\(valueText)}".utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: signedBytes(payload: Substring(payload)), using: keys.keys[0])
        return Self.version + "." + payload + "." + Base64URL.encode(Array(mac))
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

    // MARK: Verification

    enum Reason: String, Error, CaseIterable {
        case malformed, signature, expired
    }

    private func verify(_ text: String) -> Result<(value: JSONValue, expiresAt: Double), Reason> {
        guard text.utf8.count <= maximumLength else { return .failure(.malformed) }
        let parts = text.split(separator: ".", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.version, !parts[1].isEmpty,
              let mac = Base64URL.decode(parts[2]), mac.count == SHA256.byteCount
        else { return .failure(.malformed) }
        let signed = signedBytes(payload: parts[1])
        // swift-crypto compares in constant time.
        guard keys.keys.contains(where: { HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: signed, using: $0) }) else {
            return .failure(.signature)
        }
        guard let payload = Base64URL.decode(parts[1]),
              let json = try? JSONValue(jsonData: payload),
              let expiry = json["exp"]?.doubleValue, let value = json["v"]
        else { return .failure(.malformed) }
        guard clock.now() < expiry else { return .failure(.expired) }
        return .success((value, expiry))
    }

    private func signedBytes(payload: Substring) -> [UInt8] {
        var bytes = Array(Self.version.utf8)
        bytes.append(0)
        bytes.append(contentsOf: purpose.utf8)
        bytes.append(0)
        bytes.append(contentsOf: payload.utf8)
        return bytes
    }

    /// `duration` in whole milliseconds, clamped to 1 ms … 100 years.
    private static func milliseconds(_ duration: Duration) -> Int64 {
        let hundredYears = 100 * 366 * 24 * 3600 * 1000
        return Int64(min(hundredYears, max(1, duration.wholeMilliseconds)))
    }

    /// The refusals of one codec and its copies.
    private final class Rejections: Sendable {
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
