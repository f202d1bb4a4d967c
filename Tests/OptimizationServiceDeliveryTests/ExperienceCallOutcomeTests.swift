import OptimizationJSON
import OptimizationServiceDelivery
import OptimizationVocabulary
import Testing

/// The shared core's `experience` value, read once into the one typed outcome the circuit, the
/// metrics and the event's result use.
@Suite struct ExperienceCallOutcomeTests {
    @Test func anAnswerIsDeliveredWithItsData() {
        let data: JSONValue = ["profile": ["id": "p-1"], "selectedOptimizations": [], "changes": []]
        let outcome = ExperienceCallOutcome(["ok": true, "status": 200, "data": data])
        #expect(outcome.kind == .answered && outcome.status == 200 && outcome.data == data)
        #expect(outcome.eventOutcome(budget: .milliseconds(300)) == .delivered)
        #expect(!outcome.isTransientAPIFailure)
    }

    @Test(arguments: [
        ("retry", EventOutcome.failed(status: 503, code: "E", reason: "why")),
        ("timeout", EventOutcome.timedOut(after: .milliseconds(300))),
        ("circuitOpen", EventOutcome.circuitOpen),
        ("drop", EventOutcome.refused(status: 503, code: "E", reason: "why")),
        ("disable", EventOutcome.refused(status: 503, code: "E", reason: "why")),
        ("invalid", EventOutcome.refused(status: 503, code: "E", reason: "why")),
        ("a kind this host does not know", EventOutcome.refused(status: 503, code: "E", reason: "why")),
    ])
    func eachFailureKindIsOneEventOutcome(kind: String, expected: EventOutcome) {
        let outcome = ExperienceCallOutcome(["ok": false, "kind": .string(kind), "status": 503, "reason": "why", "code": "E"])
        #expect(outcome.eventOutcome(budget: .milliseconds(300)) == expected)
        #expect(outcome.data == nil)
        #expect(outcome.isTransientAPIFailure == (kind == "retry" || kind == "timeout"))
    }

    @Test func anOverloadedProfileIsNoFailureOfTheAPI() {
        let overloaded = ExperienceCallOutcome(["ok": false, "kind": "retry", "status": 429, "code": "ERR_PROFILE_OVERLOAD"])
        #expect(!overloaded.isTransientAPIFailure)
        #expect(overloaded.eventOutcome(budget: .seconds(1)) == .failed(status: 429, code: "ERR_PROFILE_OVERLOAD", reason: "Experience API call failed"))
    }

    @Test func aFailureWithoutAKindCannotBeRead() {
        let outcome = ExperienceCallOutcome(["ok": false])
        #expect(outcome.kind == .invalid && outcome.status == 0)
    }
}
