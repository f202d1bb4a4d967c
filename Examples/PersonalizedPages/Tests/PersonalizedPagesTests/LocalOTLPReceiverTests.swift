import AsyncHTTPClient
import Foundation
import NIOCore
import OptimizationTesting
import Testing

/// The test kit's OTLP/HTTP receiver and its protobuf reader, on messages built field by field
/// from the OpenTelemetry protocol's `.proto` numbers (bytes a real exporter sends are read in
/// `OTLPExportTests`).
@Suite(.hangBound) struct LocalOTLPReceiverTests {
    typealias Field = ProtobufField

    static func message(_ number: Int, _ fields: [Field]) -> Field {
        Field(number: number, value: .lengthDelimited(ProtobufWireReader.encode(fields)))
    }

    static func string(_ number: Int, _ text: String) -> Field {
        Field(number: number, value: .lengthDelimited(Array(text.utf8)))
    }

    static func keyValue(_ key: String, _ value: [Field]) -> [Field] {
        [string(1, key), message(2, value)]
    }

    /// An `ExportTraceServiceRequest` of one resource (`service.name`), one scope and two spans:
    /// a server span and its client child with every attribute type, an event and an error status.
    static let exportRequest: [UInt8] = {
        let traceID = [UInt8](repeating: 0xAB, count: 16)
        let server: [Field] = [
            Field(number: 1, value: .lengthDelimited(traceID)),
            Field(number: 2, value: .lengthDelimited([1, 2, 3, 4, 5, 6, 7, 8])),
            Field(number: 4, value: .lengthDelimited([])),
            string(5, "GET /"),
            Field(number: 6, value: .varint(2)),
            Field(number: 7, value: .fixed64(1_000)),
            Field(number: 8, value: .fixed64(2_000)),
            message(9, keyValue("http.route", [string(1, "/")])),
        ]
        let client: [Field] = [
            Field(number: 1, value: .lengthDelimited(traceID)),
            Field(number: 2, value: .lengthDelimited([9, 10, 11, 12, 13, 14, 15, 16])),
            Field(number: 4, value: .lengthDelimited([1, 2, 3, 4, 5, 6, 7, 8])),
            string(5, "Experience API request"),
            Field(number: 6, value: .varint(3)),
            message(9, keyValue("http.response.status_code", [Field(number: 3, value: .varint(503))])),
            message(9, keyValue("retried", [Field(number: 2, value: .varint(1))])),
            message(9, keyValue("ratio", [Field(number: 4, value: .fixed64(0.25.bitPattern))])),
            message(9, keyValue("delta", [Field(number: 3, value: .varint(UInt64(bitPattern: -7)))])),
            message(9, keyValue("tags", [message(5, [message(1, [string(1, "a")]), message(1, [Field(number: 3, value: .varint(2))])])])),
            message(11, [
                Field(number: 1, value: .fixed64(1_500)), string(2, "feature_flag.evaluation"),
                message(3, keyValue("feature_flag.key", [string(1, "dark-mode")])),
            ]),
            message(15, [string(2, "upstream failed"), Field(number: 3, value: .varint(2))]),
            Field(number: 99, value: .fixed32(7)),  // unknown: skipped
        ]
        return ProtobufWireReader.encode([
            message(1, [
                message(1, [message(1, keyValue("service.name", [string(1, "shop")]))]),
                message(2, [message(1, [string(1, "swift-otel"), string(2, "1.6.0")]), message(2, server), message(2, client)]),
            ]),
        ])
    }()

    @Test func anExportRequestDecodesToItsSpans() throws {
        let spans = try OTLPTraceExport.spans(fromExportRequest: Self.exportRequest)
        #expect(spans.count == 2)
        let server = try #require(spans.first)
        #expect(server.traceID == String(repeating: "ab", count: 16))
        #expect(server.spanID == "0102030405060708")
        #expect(server.parentSpanID == nil)
        #expect(server.name == "GET /" && server.kind == .server)
        #expect(server.startTimeUnixNano == 1_000 && server.endTimeUnixNano == 2_000)
        #expect(server.attributes["http.route"] == .string("/"))
        #expect(server.resourceAttributes["service.name"] == .string("shop"))
        #expect(server.scopeName == "swift-otel")

        let client = try #require(spans.last)
        #expect(client.parentSpanID == server.spanID && client.traceID == server.traceID)
        #expect(client.kind == .client)
        #expect(client.attributes["http.response.status_code"] == .int(503))
        #expect(client.attributes["retried"] == .bool(true))
        #expect(client.attributes["ratio"] == .double(0.25))
        #expect(client.attributes["delta"] == .int(-7))
        #expect(client.attributes["tags"] == .array([.string("a"), .int(2)]))
        #expect(client.events == [OTLPSpanEvent(name: "feature_flag.evaluation", timeUnixNano: 1_500, attributes: [OTLPAttribute(key: "feature_flag.key", value: .string("dark-mode"))])])
        #expect(client.statusCode == 2 && client.statusMessage == "upstream failed")
    }

    @Test func metricNamesAreReadFromAMetricsExport() throws {
        let request = ProtobufWireReader.encode([
            Self.message(1, [Self.message(2, [
                Self.message(2, [Self.string(1, "optimization_resolves_total"), Self.string(2, "resolves")]),
                Self.message(2, [Self.string(1, "optimization_engine_pool_wait")]),
            ])]),
        ])
        #expect(try OTLPTraceExport.metricNames(fromExportRequest: request) == ["optimization_resolves_total", "optimization_engine_pool_wait"])
    }

    @Test func malformedBytesAreRefusedWithTheirOffset() {
        #expect(throws: ProtobufWireError("varint at offset 1 is truncated")) { try ProtobufWireReader.fields(of: [0x08, 0x80]) }
        #expect(throws: ProtobufWireError("length 5 at offset 0 runs past the end (4 bytes)")) { try ProtobufWireReader.fields(of: [0x0A, 5, 1, 2]) }
        #expect(throws: ProtobufWireError("wire type 3 of field 1 at offset 0 is not supported")) { try ProtobufWireReader.fields(of: [0x0B]) }
        #expect(throws: ProtobufWireError("field number 0 at offset 0")) { try ProtobufWireReader.fields(of: [0x00, 0x01]) }
        #expect(throws: ProtobufWireError("8-byte value at offset 1 is truncated")) { try ProtobufWireReader.fields(of: [0x09, 1, 2]) }
        // A span name sent as a varint: the schema's wire type is checked.
        let wrongType = ProtobufWireReader.encode([Self.message(1, [Self.message(2, [Self.message(2, [Field(number: 5, value: .varint(1))])])])])
        #expect(throws: ProtobufWireError("field 5 is not length-delimited")) { try OTLPTraceExport.spans(fromExportRequest: wrongType) }
    }

    @Test func theReceiverRecordsExportsOverHTTPAndRefusesWhatItDoesNotSpeak() async throws {
        let receiver = LocalOTLPReceiver()
        try await receiver.start()
        defer { Task { try? await receiver.stop() } }
        try await withHTTPClient { client in
            let waiter = Task { try await receiver.waitForSpans { $0.contains { $0.name == "Experience API request" } } }
            let traces = try await Self.post(client, receiver.endpoint + "/v1/traces", Self.exportRequest)
            #expect(traces == 200)
            let waited = try await waiter.value
            #expect(waited.count == 2)
            let metrics = try await Self.post(client, receiver.endpoint + "/v1/metrics", [0x0A, 0x00])
            #expect(metrics == 200)
            let garbage = try await Self.post(client, receiver.endpoint + "/v1/traces", [0x0A, 0x09])
            #expect(garbage == 400)
            let json = try await Self.post(client, receiver.endpoint + "/v1/traces", Array("{}".utf8), contentType: "application/json")
            #expect(json == 415)
            let gzip = try await Self.post(client, receiver.endpoint + "/v1/traces", Self.exportRequest, encoding: "gzip")
            #expect(gzip == 415)
            let logs = try await Self.post(client, receiver.endpoint + "/v1/logs", Self.exportRequest)
            #expect(logs == 404)
        }
        #expect(receiver.spans.count == 2)
        #expect(receiver.traceExports == [Self.exportRequest])
        #expect(receiver.metricsExports == [[0x0A, 0x00]])
        #expect(receiver.decodingErrors == ["length 9 at offset 0 runs past the end (2 bytes)"])
        #expect(receiver.refusedRequests == [
            "POST /v1/traces (application/json)", "POST /v1/traces (application/x-protobuf)", "POST /v1/logs (application/x-protobuf)",
        ])
    }

    /// POSTs `body` to `url` and returns the status.
    static func post(
        _ client: HTTPClient, _ url: String, _ body: [UInt8], contentType: String = "application/x-protobuf", encoding: String? = nil
    ) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        if let encoding { request.headers.add(name: "Content-Encoding", value: encoding) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }
}
