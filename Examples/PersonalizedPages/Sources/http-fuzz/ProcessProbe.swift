import Foundation

/// The app process under test, watched through `/proc/<pid>` (Linux).
struct ProcessProbe: Sendable {
    let pid: Int32

    /// Whether the process still exists and is not a zombie.
    var isAlive: Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        return !status.contains("State:\tZ")
    }

    /// Peak resident memory so far (`VmHWM`), in KiB; nil when the process is gone.
    var peakResidentKiB: Int? { field("VmHWM") }

    /// Resident memory now (`VmRSS`), in KiB; nil when the process is gone.
    var residentKiB: Int? { field("VmRSS") }

    private func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.dropFirst(name.count + 1).split(whereSeparator: \.isWhitespace).first ?? "")
        }
        return nil
    }
}
