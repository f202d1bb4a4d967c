import Foundation

/// `JSRuntime/bridge-contract.json` read strictly (an unknown key, a missing field, a name that is
/// no identifier or a name given twice is an error, so a typo fails the build instead of dropping
/// an entry), and the Swift it stands for: the lists of `BridgeContract` (target
/// `OptimizationEngine`), each group an enum of `BridgeFunction` or `NativeCallback` constants
/// with the JSON's text as their documentation.
struct BridgeContractSource {
    /// One function of the contract.
    struct Function {
        /// Its JavaScript name (`initialize`, `__timerFired`, `__nativeSettle`).
        let name: String
        /// The name of its Swift constant.
        let swiftName: String
        /// Its parameters as the JavaScript declares them (an optional one ends in `?`); their
        /// count is the function's arity (`Function.length`).
        let params: [String]
        /// What it does (Markdown), the constant's documentation.
        let doc: String
        /// The heading it is listed under, if any.
        let topic: String?
        /// Whether it is the async function of an event call (Swift's `EventMethod`).
        let event: Bool
        /// For a native callback: whether the Swift host installs it.
        let installed: Bool
        /// For a native callback: whether every `JavaScriptEngine` installs it (`HostBinding`).
        let hostBinding: Bool
    }

    /// The functions of one JavaScript object (or the native callbacks), a Swift enum.
    struct Group {
        /// The object that holds them (`__bridge`, `globalThis`…); nil for the native callbacks.
        let object: String?
        /// The Swift enum's name.
        let swiftName: String
        /// The enum's documentation.
        let doc: String
        /// Whether the object may have no other key (checked by the contract tests).
        let closed: Bool
        /// Whether only a benchmark loads it (left out of `BridgeContract.functions`).
        let benchmark: Bool
        let functions: [Function]
    }

    /// What is wrong with the file.
    struct Failure: Error {
        let message: String
    }

    let objects: [Group]
    let natives: Group

    /// Reads the JSON text of the contract.
    init(json: Data) throws(Failure) {
        let root: JSONTree
        do {
            root = try JSONDecoder().decode(JSONTree.self, from: json)
        } catch {
            throw Failure(message: "not JSON: \(error)")
        }
        let file = try Fields(root, "the file", allowed: ["about", "objects", "natives"])
        objects = try file.array("objects").enumerated().map { index, value throws(Failure) in
            try Self.group(value, "objects[\(index)]", native: false)
        }
        natives = try Self.group(file.value("natives"), "natives", native: true)
        try check()
    }

    private static func group(_ value: JSONTree?, _ context: String, native: Bool) throws(Failure) -> Group {
        let fields = try Fields(
            value, context, allowed: native ? ["swift", "doc", "functions"] : ["object", "swift", "doc", "closed", "benchmark", "functions"])
        let object = native ? nil : try fields.string("object")
        let context = object.map { "\(context) (\($0))" } ?? context
        let functions = try fields.array("functions").enumerated().map { index, value throws(Failure) in
            try function(value, "\(context).functions[\(index)]", native: native, object: object)
        }
        return Group(
            object: object, swiftName: try fields.identifier("swift"), doc: try fields.string("doc"),
            closed: try fields.bool("closed", default: false), benchmark: try fields.bool("benchmark", default: false),
            functions: functions)
    }

    private static func function(_ value: JSONTree?, _ context: String, native: Bool, object: String?) throws(Failure) -> Function {
        let fields = try Fields(
            value, context,
            allowed: native ? ["name", "topic", "params", "doc", "installed", "hostBinding"] : ["name", "topic", "params", "doc", "event"])
        let name = try fields.string("name")
        guard name.range(of: #"^[A-Za-z_$][A-Za-z0-9_$]*$"#, options: .regularExpression) != nil else {
            throw Failure(message: "\(context): \"\(name)\" is not a JavaScript identifier")
        }
        let swiftName: String
        if native {
            guard name.hasPrefix("__native"), name.count > "__native".count else {
                throw Failure(message: "\(context): a native callback's name starts with __native, not \"\(name)\"")
            }
            let rest = name.dropFirst("__native".count)
            swiftName = rest.prefix(1).lowercased() + rest.dropFirst()
        } else {
            swiftName = String(name.drop { $0 == "_" })
        }
        guard swiftName.range(of: #"^[A-Za-z_][A-Za-z0-9_]*$"#, options: .regularExpression) != nil else {
            throw Failure(message: "\(context): \"\(name)\" gives no Swift name")
        }
        let params = try fields.strings("params")
        for param in params where param.range(of: #"^[A-Za-z_$][A-Za-z0-9_$]*\??$"#, options: .regularExpression) == nil {
            throw Failure(message: "\(context): parameter \"\(param)\" is not an identifier (optional: name?)")
        }
        return Function(
            name: name, swiftName: swiftName, params: params, doc: try fields.string("doc"), topic: try fields.optionalString("topic"),
            event: try fields.bool("event", default: false), installed: try fields.bool("installed", default: true),
            hostBinding: try fields.bool("hostBinding", default: false))
    }

    /// Names given twice, events outside one object.
    private func check() throws(Failure) {
        var enums = Set<String>()
        var paths = Set<String>()
        for group in objects + [natives] {
            guard enums.insert(group.swiftName).inserted else { throw Failure(message: "two groups are named \(group.swiftName)") }
            var constants = Set(["all", "hostBindings"])
            for function in group.functions {
                guard constants.insert(function.swiftName).inserted else {
                    throw Failure(message: "\(group.swiftName): the Swift name \(function.swiftName) is taken (\(function.name))")
                }
                let path = group.object.map { Self.path(object: $0, name: function.name) } ?? function.name
                guard paths.insert(path).inserted else { throw Failure(message: "\(path) is in the contract twice") }
            }
        }
        if objects.filter({ $0.functions.contains(where: \.event) }).count > 1 {
            throw Failure(message: "event functions (\"event\": true) belong to one object")
        }
    }

    /// The dotted path a call takes (`globalThis` functions: the bare name).
    static func path(object: String, name: String) -> String {
        object == "globalThis" ? name : "\(object).\(name)"
    }

    // MARK: - The Swift source

    /// The Swift file: an extension of `BridgeContract` with one enum per group.
    func swiftSource() -> String {
        var lines = [
            "// Generated by EmbedJSRuntimeTool from JSRuntime/bridge-contract.json. Do not edit: change the JSON",
            "// (its fields: JSRuntime/README.md, \"The bridge contract\").",
            "",
            "extension BridgeContract {",
        ]
        for group in objects {
            lines += enumLines(group)
            lines.append("")
        }
        lines += enumLines(natives)
        lines.append("")
        let production = objects.filter { !$0.benchmark }.map { "\($0.swiftName).all" }
        lines += [
            "    /// Every JavaScript function the Swift side calls in a production engine (every group but the benchmark's).",
            "    package static let functions: [BridgeFunction] = \(production.isEmpty ? "[]" : production.joined(separator: " + "))",
            "}",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    private func enumLines(_ group: Group) -> [String] {
        var lines = Self.comment(group.doc, indent: 4)
        lines.append("    package enum \(group.swiftName) {")
        var topic: String?
        for function in group.functions {
            if let next = function.topic, next != topic {
                lines += ["        // MARK: \(next)", ""]
                topic = next
            }
            let signature = "\(group.object.map { Self.path(object: $0, name: function.name) } ?? function.name)(\(function.params.joined(separator: ", ")))"
            lines += Self.comment(function.doc, indent: 8)
            lines += ["        ///", "        /// JavaScript: `\(signature)`."]
            let value: String
            if let object = group.object {
                value = "BridgeFunction(\"\(object)\", \"\(function.name)\", arity: \(function.params.count))"
            } else {
                value = "NativeCallback(\"\(function.name)\"\(function.installed ? "" : ", installed: false"))"
            }
            lines += ["        package static let \(Self.escaped(function.swiftName)) = \(value)", ""]
        }
        if topic != nil { lines += ["        // MARK: Lists", ""] }
        let type = group.object == nil ? "NativeCallback" : "BridgeFunction"
        if group.object == nil {
            let bindings = group.functions.filter(\.hostBinding)
            lines.append("        /// The host bindings every `JavaScriptEngine` installs (JavaScriptHost's `HostBinding`), in the contract's order.")
            lines += Self.list("hostBindings", type: type, bindings.map(\.swiftName))
        }
        lines.append("        /// Every function of this group, in the contract's order.")
        lines += Self.list("all", type: type, group.functions.map(\.swiftName))
        let events = group.functions.filter(\.event)
        if !events.isEmpty, let object = group.object {
            lines += [
                "",
                "        /// The async `\(object)` function of an event call, named as the call (`\"event\": true` in the contract).",
                "        package static func function(for method: EventMethod) -> BridgeFunction {",
                "            switch method {",
            ]
            lines += events.map { "            case .\(Self.escaped($0.swiftName)): \(Self.escaped($0.swiftName))" }
            lines += ["            }", "        }"]
        }
        lines.append("    }")
        return lines
    }

    /// `package static let <name>: [<type>] = [...]`, wrapped.
    private static func list(_ name: String, type: String, _ elements: [String]) -> [String] {
        guard !elements.isEmpty else { return ["        package static let \(name): [\(type)] = []"] }
        var lines = ["        package static let \(name): [\(type)] = ["]
        var line = ""
        for element in elements.map({ escaped($0) + "," }) {
            if !line.isEmpty, 12 + line.count + 1 + element.count > 120 {
                lines.append("            " + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + element
        }
        lines += ["            " + line, "        ]"]
        return lines
    }

    /// `text` as `///` lines of at most 120 columns (a word longer than a line stays whole).
    private static func comment(_ text: String, indent: Int) -> [String] {
        let prefix = String(repeating: " ", count: indent) + "///"
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = prefix
            for word in paragraph.split(separator: " ") {
                if line != prefix, line.count + 1 + word.count > 120 {
                    lines.append(line)
                    line = prefix
                }
                line += " " + word
            }
            lines.append(line)
        }
        return lines
    }

    private static let keywords: Set<String> = [
        "associatedtype", "case", "class", "default", "defer", "deinit", "do", "else", "enum", "extension", "false", "for",
        "func", "guard", "if", "import", "in", "init", "inout", "internal", "is", "let", "nil", "operator", "private",
        "protocol", "public", "repeat", "rethrows", "return", "self", "Self", "static", "struct", "subscript", "super",
        "switch", "throw", "throws", "true", "try", "typealias", "var", "where", "while",
    ]

    /// `name`, in backticks when it is a Swift keyword.
    private static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }
}

/// A JSON value as the contract reads it (booleans apart from numbers).
private indirect enum JSONTree: Decodable {
    case object([String: JSONTree])
    case array([JSONTree])
    case string(String)
    case bool(Bool)
    case number(Double)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONTree].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONTree].self))
        }
    }
}

/// A JSON object's fields, read strictly.
private struct Fields {
    let values: [String: JSONTree]
    let context: String

    /// `value` as an object whose keys are all `allowed`.
    init(_ value: JSONTree?, _ context: String, allowed: Set<String>) throws(BridgeContractSource.Failure) {
        guard case .object(let values)? = value else { throw .init(message: "\(context) must be an object") }
        if let unknown = values.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw .init(message: "\(context): unknown key \"\(unknown)\" (known: \(allowed.sorted().joined(separator: ", ")))")
        }
        self.values = values
        self.context = context
    }

    func value(_ key: String) throws(BridgeContractSource.Failure) -> JSONTree {
        guard let value = values[key] else { throw .init(message: "\(context): \"\(key)\" is missing") }
        return value
    }

    func string(_ key: String) throws(BridgeContractSource.Failure) -> String {
        guard case .string(let string) = try value(key), !string.isEmpty else {
            throw .init(message: "\(context): \"\(key)\" must be a non-empty string")
        }
        return string
    }

    func optionalString(_ key: String) throws(BridgeContractSource.Failure) -> String? {
        values[key] == nil ? nil : try string(key)
    }

    func identifier(_ key: String) throws(BridgeContractSource.Failure) -> String {
        let name = try string(key)
        guard name.range(of: #"^[A-Z][A-Za-z0-9]*$"#, options: .regularExpression) != nil else {
            throw .init(message: "\(context): \"\(key)\" must be a Swift type name, not \"\(name)\"")
        }
        return name
    }

    func bool(_ key: String, default fallback: Bool) throws(BridgeContractSource.Failure) -> Bool {
        guard let value = values[key] else { return fallback }
        guard case .bool(let bool) = value else { throw .init(message: "\(context): \"\(key)\" must be true or false") }
        return bool
    }

    func array(_ key: String) throws(BridgeContractSource.Failure) -> [JSONTree] {
        guard case .array(let array) = try value(key) else { throw .init(message: "\(context): \"\(key)\" must be an array") }
        return array
    }

    func strings(_ key: String) throws(BridgeContractSource.Failure) -> [String] {
        try array(key).map { element throws(BridgeContractSource.Failure) in
            guard case .string(let string) = element else {
                throw .init(message: "\(context): \"\(key)\" must be an array of strings")
            }
            return string
        }
    }
}
