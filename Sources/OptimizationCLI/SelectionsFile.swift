import Foundation
import Optimization

/// Reads `--selections`: a bare JSON array of selected optimizations, used as given, or an
/// Experience API answer, read by the client's shared core exactly as a live answer is (so the
/// file and `--profile` print the same selection for the same answer).
enum SelectionsFile {
    /// - Throws: ``CLIFailure``: 66 when the file cannot be read, 65 when it is neither a JSON
    ///   array of selections nor a valid Experience API answer of `apiVersion`.
    static func read(_ path: String, apiVersion: OptimizationAPIVersion, client: OptimizationClient) throws(CLIFailure) -> SelectedOptimizations {
        let data = try InputFile.read(path)
        let firstByte = data.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        do {
            if firstByte == UInt8(ascii: "[") {
                return try SelectedOptimizations(jsonData: data)
            }
            return try client.parseExperienceAnswer(String(decoding: data, as: UTF8.self), apiVersion: apiVersion).selectedOptimizations
        } catch {
            throw .data("\(InputFile.displayName(path)): \(error)")
        }
    }
}
