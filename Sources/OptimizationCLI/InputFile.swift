import Foundation

/// Reads a command-line input: a file path, or `-` for standard input.
enum InputFile {
    /// Inputs larger than this are refused as bad data rather than read into memory.
    static let maximumBytes = 64 * 1024 * 1024

    /// - Throws: ``CLIFailure`` (66 when the file cannot be read, 65 when it is too large).
    static func read(_ path: String) throws(CLIFailure) -> Data {
        if path == "-" {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            guard data.count <= maximumBytes else { throw .data("standard input is larger than \(maximumBytes) bytes") }
            return data
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .noInput("\(path): no such file")
        }
        guard !isDirectory.boolValue else { throw .noInput("\(path): is a directory, expected a JSON file") }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .noInput("\(path): cannot open for reading") }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maximumBytes + 1) ?? Data()
        } catch {
            throw .noInput("\(path): cannot read: \(error.localizedDescription)")
        }
        guard data.count <= maximumBytes else { throw .data("\(path): larger than \(maximumBytes) bytes") }
        return data
    }

    /// How an input is named in messages.
    static func displayName(_ path: String) -> String {
        path == "-" ? "<stdin>" : path
    }
}

extension InputFile {
    /// Reads `path` and decodes it with `decode`; a decoding error becomes
    /// `error: <name>: <error>` with exit code 65, a read error keeps its own code.
    static func decode<Value>(_ path: String, _ decode: (Data) throws -> Value) throws(CLIFailure) -> Value {
        let data = try read(path)
        do {
            return try decode(data)
        } catch {
            throw .data("\(displayName(path)): \(error)")
        }
    }
}
