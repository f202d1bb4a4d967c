import Foundation

/// This process's resident set size, read from `/proc/self/statm` (Linux).
enum ResidentMemory {
    /// Resident memory in MiB; 0 when `/proc` cannot be read.
    static func mebibytes() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }
}
