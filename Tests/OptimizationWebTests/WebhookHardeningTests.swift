import Logging
import Optimization
import OptimizationTesting
import OptimizationTestSupport
import Testing

/// The webhook receiver against an attacker: a captured webhook sent again, text after a second
/// `?`, attacker text in the headers it logs, and heads refused before any body is read.
@Suite struct WebhookHardeningTests {
    static let secret = String(repeating: "w", count: 64)

    static func receiver(_ clock: ManualClock, invalidated: SendableRecorder<String>) throws -> ContentfulWebhookReceiver {
        ContentfulWebhookReceiver(authentication: try .signed(secret: secret), clock: clock) { invalidated.append($0) }
    }

    static func webhook(_ id: String, path: String = "/hook") -> ContentfulWebhookRequest {
        ContentfulWebhookRequest(
            method: "POST", path: path, headers: [(name: "content-type", value: "application/json")], body: Array(#"{"sys":{"id":"\#(id)"}}"#.utf8))
    }

    @Test func aCapturedWebhookSentAgainWithinItsTimeToLiveIsRefused() async throws {
        let clock = ManualClock(start: 1_700_000_000_000)
        let invalidated = SendableRecorder<String>()
        let receiver = try Self.receiver(clock, invalidated: invalidated)
        let signed = try ContentfulWebhookSigner(secret: Self.secret).signed(Self.webhook("e1"), timestamp: Int64(clock.now()))
        let logs = LogRecorder()
        #expect(try await receiver.receive(signed, logger: logs.logger) == .invalidated(id: "e1"))
        clock.advance(by: .seconds(10))
        #expect(try await receiver.receive(signed, logger: logs.logger) == .unauthenticated, "the same signed request again")
        #expect(invalidated.all == ["e1"])
        #expect(logs.all.last?.metadata["reason"] == "replayed")
        // A new webhook (another timestamp) is taken.
        let next = try ContentfulWebhookSigner(secret: Self.secret).signed(Self.webhook("e1"), timestamp: Int64(clock.now()))
        #expect(try await receiver.receive(next, logger: logs.logger) == .invalidated(id: "e1"))
    }

    @Test func textAfterASecondQuestionMarkIsNotTaken() async throws {
        let clock = ManualClock(start: 1_700_000_000_000)
        let invalidated = SendableRecorder<String>()
        let receiver = try Self.receiver(clock, invalidated: invalidated)
        let signed = try ContentfulWebhookSigner(secret: Self.secret).signed(Self.webhook("e2", path: "/hook?a=1"), timestamp: Int64(clock.now()))
        var extended = signed
        extended.path = "/hook?a=1?attacker=text"
        #expect(try await receiver.receive(extended, logger: Self.quiet) == .unauthenticated)
        #expect(receiver.refusal(method: "POST", path: extended.path, headers: extended.headers, logger: Self.quiet) == .unauthenticated)
        #expect(invalidated.all.isEmpty)
        #expect(try await receiver.receive(signed, logger: Self.quiet) == .invalidated(id: "e2"))
    }

    @Test func aRefusalLogsAFixedReasonAndNoTextOfTheRequest() async throws {
        let clock = ManualClock(start: 1_700_000_000_000)
        let receiver = try Self.receiver(clock, invalidated: SendableRecorder<String>())
        let attackerText = "forged-log-line " + String(repeating: "A", count: 2_000)
        var request = Self.webhook("e3")
        request.headers += [
            (name: "x-contentful-signature", value: String(repeating: "0", count: 64)),
            (name: "x-contentful-timestamp", value: String(Int64(clock.now()))),
            (name: "x-contentful-signed-headers", value: "x-contentful-timestamp," + attackerText),
        ]
        let logs = LogRecorder()
        #expect(try await receiver.receive(request, logger: logs.logger) == .unauthenticated)
        #expect(receiver.refusal(method: "POST", path: request.path, headers: request.headers, logger: logs.logger) == .unauthenticated)
        #expect(logs.all.count == 2)
        for record in logs.all {
            #expect(!record.text.contains("forged-log-line"))
            #expect(record.metadata["reason"] == "missing_signed_header")
        }
    }

    @Test func aHeadThatFailsIsRefusedBeforeTheBodyAndAGoodHeadIsNot() throws {
        let clock = ManualClock(start: 1_700_000_000_000)
        let receiver = try Self.receiver(clock, invalidated: SendableRecorder<String>())
        let signed = try ContentfulWebhookSigner(secret: Self.secret).signed(Self.webhook("e4"), timestamp: Int64(clock.now()))
        #expect(receiver.refusal(method: "POST", path: "/hook", headers: signed.headers, logger: Self.quiet) == nil, "the body decides")
        #expect(receiver.refusal(method: "POST", path: "/hook", headers: [], logger: Self.quiet) == .unauthenticated)
        clock.advance(by: .seconds(31))
        #expect(receiver.refusal(method: "POST", path: "/hook", headers: signed.headers, logger: Self.quiet) == .unauthenticated, "stale")
        let open = ContentfulWebhookReceiver(authentication: .insecureUnsigned) { _ in }
        #expect(open.refusal(method: "POST", path: "/hook", headers: [], logger: Self.quiet) == nil)
    }

    static let quiet = Logger(label: "webhook-tests", factory: { _ in SwiftLogNoOpLogHandler() })
}
