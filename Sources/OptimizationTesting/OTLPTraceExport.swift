/// An OTLP attribute value (`opentelemetry.proto.common.v1.AnyValue`).
public enum OTLPAttributeValue: Sendable, Equatable, CustomStringConvertible {
    /// `string_value`.
    case string(String)
    /// `bool_value`.
    case bool(Bool)
    /// `int_value`.
    case int(Int64)
    /// `double_value`.
    case double(Double)
    /// `array_value`, in wire order.
    case array([OTLPAttributeValue])
    /// A `kvlist_value`, in wire order.
    case keyValueList([OTLPAttribute])
    /// `bytes_value`.
    case bytes([UInt8])
    /// An `AnyValue` that holds none of the above (an empty value).
    case empty

    /// The text when the value is a string; nil otherwise.
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value as an `Int64` when it is an int; nil otherwise.
    public var int: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The value when it is a bool; nil otherwise.
    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The value as text: strings quoted, arrays in brackets.
    public var description: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .keyValueList(let values): "{" + values.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .bytes(let value): "<\(value.count) bytes>"
        case .empty: "<empty>"
        }
    }
}

/// One attribute (`opentelemetry.proto.common.v1.KeyValue`).
public struct OTLPAttribute: Sendable, Equatable {
    /// The attribute's name (`http.request.method`, …).
    public var key: String
    /// Its value.
    public var value: OTLPAttributeValue

    /// Creates an attribute.
    public init(key: String, value: OTLPAttributeValue) {
        self.key = key
        self.value = value
    }
}

extension [OTLPAttribute] {
    /// The value of the first attribute named `key`; nil when there is none.
    public subscript(key: String) -> OTLPAttributeValue? {
        first { $0.key == key }?.value
    }
}

/// An event recorded on a span (`Span.Event`): `feature_flag.evaluation`, `exception`, ….
public struct OTLPSpanEvent: Sendable, Equatable {
    /// The event's name.
    public var name: String
    /// When it happened, in nanoseconds since the Unix epoch.
    public var timeUnixNano: UInt64
    /// Its attributes, in wire order.
    public var attributes: [OTLPAttribute]

    /// Creates an event.
    public init(name: String, timeUnixNano: UInt64 = 0, attributes: [OTLPAttribute] = []) {
        self.name = name
        self.timeUnixNano = timeUnixNano
        self.attributes = attributes
    }
}

/// A span as an OTLP exporter sent it (`opentelemetry.proto.trace.v1.Span`), with the resource
/// and instrumentation scope it was sent under. Ids are lowercase hex, as in W3C `traceparent`.
public struct OTLPSpan: Sendable, Equatable {
    /// `Span.SpanKind`: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
    public enum Kind: Int, Sendable, Equatable {
        /// `SPAN_KIND_UNSPECIFIED`, or a value this reader does not know.
        case unspecified = 0
        /// `SPAN_KIND_INTERNAL`.
        case `internal` = 1
        /// `SPAN_KIND_SERVER`.
        case server = 2
        /// `SPAN_KIND_CLIENT`.
        case client = 3
        /// `SPAN_KIND_PRODUCER`.
        case producer = 4
        /// `SPAN_KIND_CONSUMER`.
        case consumer = 5
    }

    /// The trace id, 32 hex digits.
    public var traceID: String
    /// The span id, 16 hex digits.
    public var spanID: String
    /// The parent's span id, 16 hex digits; nil for a root span (the field empty or absent).
    public var parentSpanID: String?
    /// The span's name.
    public var name: String
    /// The span's kind; ``Kind/unspecified`` for a value this reader does not know.
    public var kind: Kind
    /// Start, in nanoseconds since the Unix epoch.
    public var startTimeUnixNano: UInt64
    /// End, in nanoseconds since the Unix epoch.
    public var endTimeUnixNano: UInt64
    /// The span's attributes, in wire order.
    public var attributes: [OTLPAttribute]
    /// The span's events, in wire order.
    public var events: [OTLPSpanEvent]
    /// `Status.code`: 0 unset, 1 ok, 2 error.
    public var statusCode: Int
    /// `Status.message`; empty when none.
    public var statusMessage: String
    /// The attributes of the resource the span was exported under (`service.name`, …).
    public var resourceAttributes: [OTLPAttribute]
    /// The name of the instrumentation scope the span was exported under; empty when none.
    public var scopeName: String

    /// Creates a span (for building expectations in tests).
    public init(
        traceID: String, spanID: String, parentSpanID: String? = nil, name: String, kind: Kind = .internal,
        startTimeUnixNano: UInt64 = 0, endTimeUnixNano: UInt64 = 0, attributes: [OTLPAttribute] = [],
        events: [OTLPSpanEvent] = [], statusCode: Int = 0, statusMessage: String = "",
        resourceAttributes: [OTLPAttribute] = [], scopeName: String = ""
    ) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.name = name
        self.kind = kind
        self.startTimeUnixNano = startTimeUnixNano
        self.endTimeUnixNano = endTimeUnixNano
        self.attributes = attributes
        self.events = events
        self.statusCode = statusCode
        self.statusMessage = statusMessage
        self.resourceAttributes = resourceAttributes
        self.scopeName = scopeName
    }
}

/// Decodes the body of an OTLP/HTTP trace export (`application/x-protobuf`,
/// `opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`) with
/// ``ProtobufWireReader``: `resource_spans` (1) → `resource` (1) and `scope_spans` (2) →
/// `scope` (1) and `spans` (2) → each span's `trace_id` (1), `span_id` (2), `parent_span_id` (4),
/// `name` (5), `kind` (6), start and end times (7, 8, fixed64), `attributes` (9), `events` (11:
/// `time_unix_nano` 1, `name` 2, `attributes` 3) and `status` (15: `message` 2, `code` 3).
/// `KeyValue` is `key` (1), `value` (2); `AnyValue` is `string_value` (1), `bool_value` (2),
/// `int_value` (3), `double_value` (4), `array_value` (5), `kvlist_value` (6), `bytes_value` (7).
/// Field numbers as in the OpenTelemetry protocol's `.proto` files; other fields are skipped.
public enum OTLPTraceExport {
    /// Every span of an `ExportTraceServiceRequest`, in wire order.
    /// - Throws: ``ProtobufWireError`` when the bytes are not a well-formed protobuf message at
    ///   any level read, or a field read has another wire type than the schema's.
    public static func spans(fromExportRequest body: [UInt8]) throws -> [OTLPSpan] {
        var spans: [OTLPSpan] = []
        for resourceSpans in try messages(1, of: body) {
            let fields = try ProtobufWireReader.fields(of: resourceSpans)
            var resourceAttributes: [OTLPAttribute] = []
            for resource in try messages(1, in: fields) {
                resourceAttributes += try attributes(try messages(1, of: resource))
            }
            for scopeSpans in try messages(2, in: fields) {
                let scopeFields = try ProtobufWireReader.fields(of: scopeSpans)
                var scopeName = ""
                for scope in try messages(1, in: scopeFields) {
                    scopeName = try strings(1, of: scope).last ?? scopeName
                }
                for span in try messages(2, in: scopeFields) {
                    spans.append(try self.span(span, resourceAttributes: resourceAttributes, scopeName: scopeName))
                }
            }
        }
        return spans
    }

    /// The names of the metrics of an OTLP/HTTP metrics export
    /// (`opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest`: `resource_metrics`
    /// (1) → `scope_metrics` (2) → `metrics` (2) → `name` (1)), in wire order.
    /// - Throws: ``ProtobufWireError`` when the bytes are not well-formed at any level read.
    public static func metricNames(fromExportRequest body: [UInt8]) throws -> [String] {
        var names: [String] = []
        for resourceMetrics in try messages(1, of: body) {
            for scopeMetrics in try messages(2, of: resourceMetrics) {
                for metric in try messages(2, of: scopeMetrics) {
                    names += try strings(1, of: metric)
                }
            }
        }
        return names
    }

    private static func span(_ bytes: [UInt8], resourceAttributes: [OTLPAttribute], scopeName: String) throws -> OTLPSpan {
        var span = OTLPSpan(traceID: "", spanID: "", name: "", kind: .unspecified, resourceAttributes: resourceAttributes, scopeName: scopeName)
        var attributeMessages: [[UInt8]] = []
        for field in try ProtobufWireReader.fields(of: bytes) {
            switch field.number {
            case 1: span.traceID = hex(try lengthDelimited(field))
            case 2: span.spanID = hex(try lengthDelimited(field))
            case 4:
                let parent = try lengthDelimited(field)
                span.parentSpanID = parent.isEmpty ? nil : hex(parent)
            case 5: span.name = String(decoding: try lengthDelimited(field), as: UTF8.self)
            case 6: span.kind = OTLPSpan.Kind(rawValue: Int(truncatingIfNeeded: try varint(field))) ?? .unspecified
            case 7: span.startTimeUnixNano = try fixed64(field)
            case 8: span.endTimeUnixNano = try fixed64(field)
            case 9: attributeMessages.append(try lengthDelimited(field))
            case 11: span.events.append(try event(try lengthDelimited(field)))
            case 15:
                for statusField in try ProtobufWireReader.fields(of: try lengthDelimited(field)) {
                    switch statusField.number {
                    case 2: span.statusMessage = String(decoding: try lengthDelimited(statusField), as: UTF8.self)
                    case 3: span.statusCode = Int(truncatingIfNeeded: try varint(statusField))
                    default: break
                    }
                }
            default: break
            }
        }
        span.attributes = try attributes(attributeMessages)
        return span
    }

    private static func event(_ bytes: [UInt8]) throws -> OTLPSpanEvent {
        var event = OTLPSpanEvent(name: "")
        var attributeMessages: [[UInt8]] = []
        for field in try ProtobufWireReader.fields(of: bytes) {
            switch field.number {
            case 1: event.timeUnixNano = try fixed64(field)
            case 2: event.name = String(decoding: try lengthDelimited(field), as: UTF8.self)
            case 3: attributeMessages.append(try lengthDelimited(field))
            default: break
            }
        }
        event.attributes = try attributes(attributeMessages)
        return event
    }

    /// `KeyValue` messages as attributes.
    private static func attributes(_ keyValues: [[UInt8]]) throws -> [OTLPAttribute] {
        try keyValues.map { keyValue in
            var attribute = OTLPAttribute(key: "", value: .empty)
            for field in try ProtobufWireReader.fields(of: keyValue) {
                switch field.number {
                case 1: attribute.key = String(decoding: try lengthDelimited(field), as: UTF8.self)
                case 2: attribute.value = try anyValue(try lengthDelimited(field))
                default: break
                }
            }
            return attribute
        }
    }

    private static func anyValue(_ bytes: [UInt8]) throws -> OTLPAttributeValue {
        var value = OTLPAttributeValue.empty
        // A oneof: the last one written wins.
        for field in try ProtobufWireReader.fields(of: bytes) {
            switch field.number {
            case 1: value = .string(String(decoding: try lengthDelimited(field), as: UTF8.self))
            case 2: value = .bool(try varint(field) != 0)
            case 3: value = .int(Int64(bitPattern: try varint(field)))
            case 4: value = .double(Double(bitPattern: try fixed64(field)))
            case 5: value = .array(try messages(1, of: try lengthDelimited(field)).map(anyValue))
            case 6: value = .keyValueList(try attributes(try messages(1, of: try lengthDelimited(field))))
            case 7: value = .bytes(try lengthDelimited(field))
            default: break
            }
        }
        return value
    }

    private static func messages(_ number: Int, of message: [UInt8]) throws -> [[UInt8]] {
        try messages(number, in: try ProtobufWireReader.fields(of: message))
    }

    private static func messages(_ number: Int, in fields: [ProtobufField]) throws -> [[UInt8]] {
        try fields.filter { $0.number == number }.map(lengthDelimited)
    }

    private static func strings(_ number: Int, of message: [UInt8]) throws -> [String] {
        try messages(number, of: message).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func lengthDelimited(_ field: ProtobufField) throws -> [UInt8] {
        guard let bytes = field.bytes else { throw ProtobufWireError("field \(field.number) is not length-delimited") }
        return bytes
    }

    private static func varint(_ field: ProtobufField) throws -> UInt64 {
        guard let value = field.varint else { throw ProtobufWireError("field \(field.number) is not a varint") }
        return value
    }

    private static func fixed64(_ field: ProtobufField) throws -> UInt64 {
        guard let value = field.fixed64 else { throw ProtobufWireError("field \(field.number) is not fixed64") }
        return value
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
