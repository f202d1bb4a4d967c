import OptimizationJSON
import OptimizationServiceFace
import Testing

/// ``RequestTextBounds`` and ``RequestOptions``: every free-form text is bounded in UTF-8 bytes on
/// a scalar boundary, without control characters, in the initializer and on later assignment.
@Suite("Request text bounds")
struct RequestTextBoundsTests {
    @Test func aTextIsCutOnAScalarBoundaryWithinItsBytes() {
        #expect(RequestTextBounds.bounded("ééé", maxBytes: 5) == "éé", "é is 2 bytes: a third would need 6")
        #expect(RequestTextBounds.bounded("a😀b", maxBytes: 4) == "a", "the 4-byte scalar is not cut in half")
        #expect(RequestTextBounds.bounded("a😀b", maxBytes: 5) == "a😀")
        #expect(RequestTextBounds.bounded(String(repeating: "x", count: 70_000), maxBytes: 512).utf8.count == 512)
        #expect(RequestTextBounds.bounded("", maxBytes: 0) == "")
        #expect(RequestTextBounds.bounded(nil, maxBytes: 3) == nil)
    }

    @Test func controlCharactersAreRemovedAndOtherTextIsKept() {
        #expect(RequestTextBounds.bounded("a\r\nb\u{0}c\u{7F}d\u{85}e\u{9F}f\tg", maxBytes: 100) == "abcdefg")
        #expect(RequestTextBounds.bounded("Grüße, 東京 ✓", maxBytes: 100) == "Grüße, 東京 ✓", "within the bound and clean: as it is")
        // Controls do not count towards the bound: what is kept is counted.
        #expect(RequestTextBounds.bounded("\r\n\r\nabcd", maxBytes: 4) == "abcd")
    }

    @Test func theEventContextIsBoundedAtEveryDepth() {
        let long = String(repeating: "z", count: 5_000)
        let options = RequestOptions(eventContext: [
            "userAgent": .string(long),
            "page": ["url": .string(long), "path": "/ok", "referrer": .string("x\r\n" + long)],
            "campaign": ["tags": [.string(long), 7, true, .null]],
            .init(repeating: "k", count: 300): "long key",
        ])
        let context = options.eventContext
        #expect(context["userAgent"]?.stringValue?.utf8.count == 512)
        #expect(context["page"]?["url"]?.stringValue?.utf8.count == 2_048)
        #expect(context["page"]?["path"] == "/ok")
        #expect(context["page"]?["referrer"]?.stringValue == "x" + String(repeating: "z", count: 2_047))
        #expect(context["campaign"]?["tags"] == [.string(String(repeating: "z", count: 2_048)), 7, true, .null])
        #expect(context[String(repeating: "k", count: 256)] == "long key")
        #expect(Array(context.keys) == ["userAgent", "page", "campaign", String(repeating: "k", count: 256)], "order kept")
    }

    @Test func laterAssignmentsAreBoundedToo() {
        var options = RequestOptions(locale: "de-DE", ip: "203.0.113.7", requestId: "req-1")
        #expect(options.locale == "de-DE" && options.ip == "203.0.113.7" && options.requestId == "req-1")
        options.eventContext["userAgent"] = .string(String(repeating: "u", count: 1_000))
        options.requestId = "id\r\nforged log line" + String(repeating: "r", count: 500)
        options.ip = "203.0.113.7\r\nX-Evil: 1"
        options.locale = String(repeating: "l", count: 100)
        #expect(options.eventContext["userAgent"]?.stringValue?.utf8.count == 512)
        #expect(options.requestId?.hasPrefix("idforged log line") == true && options.requestId?.utf8.count == 128)
        #expect(options.ip == "203.0.113.7X-Evil: 1")
        #expect(options.locale?.utf8.count == 64)
    }

    @Test func anOrdinaryContextIsKeptAsItIs() {
        let options = RequestOptions(eventContext: [
            "page": ["url": "https://shop.example/a?b=c", "path": "/a", "search": "?b=c"], "userAgent": "Mozilla/5.0", "locale": "de-DE",
        ])
        #expect(JSONValue.object(options.eventContext) == [
            "page": ["url": "https://shop.example/a?b=c", "path": "/a", "search": "?b=c"], "userAgent": "Mozilla/5.0", "locale": "de-DE",
        ])
        #expect(RequestTextBounds.boundedContext(options.eventContext) == options.eventContext)
    }
}
