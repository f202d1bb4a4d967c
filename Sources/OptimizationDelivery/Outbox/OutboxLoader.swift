import Logging

/// Reads an outbox directory at open: every segment in order, minus what its `.acks` file says
/// is done. Damage is collected as ``OutboxRecoveryIssue``s and skipped; nothing here throws.
/// Fully delivered segments, leftovers of interrupted deletions and temporary files are removed.
enum OutboxLoader {
    struct Result {
        var index = OutboxIndex()
        var nextSequence: UInt64 = 1
        var issues: [OutboxRecoveryIssue] = []
    }

    static func load(path: String, fileSystem: any OutboxFileSystem) -> Result {
        var result = Result()
        func file(_ name: String) -> String { path + "/" + name }
        let names: [String]
        do {
            names = try fileSystem.list(path)
        } catch {
            if case .cannotOpen(_, let code) = error { result.issues.append(.unreadableFile(name: path, errno: code)) }
            return result
        }
        var logs: Set<UInt64> = []
        var acknowledgementFiles: Set<UInt64> = []
        for name in names {
            if name.hasSuffix(".tmp") {
                try? fileSystem.remove(file(name))
            } else if let parsed = OutboxIndex.parse(name) {
                if parsed.isLog { logs.insert(parsed.id) } else { acknowledgementFiles.insert(parsed.id) }
            }
        }
        var highest: UInt64 = 0
        for id in logs.union(acknowledgementFiles).sorted() {
            highest = max(highest, id)
            let logName = OutboxIndex.segmentName(id)
            let acknowledgementName = OutboxIndex.acknowledgementName(id)
            var done: Set<UInt64> = []
            var complete = false
            if acknowledgementFiles.contains(id) {
                if let bytes = try? fileSystem.readAll(file(acknowledgementName)) {
                    for frame in OutboxFraming.scan(bytes, magic: OutboxFraming.acknowledgementMagic).payloads {
                        switch OutboxFraming.decodeAcknowledgement(frame.payload) {
                        case .sequences(let sequences): done.formUnion(sequences)
                        case .complete: complete = true
                        case nil: break
                        }
                    }
                }
            }
            guard logs.contains(id) else {
                // A finished deletion leaves a completed .acks at most; anything else lost its segment.
                if !complete { result.issues.append(.missingSegment(segment: logName)) }
                try? fileSystem.remove(file(acknowledgementName))
                continue
            }
            let bytes: [UInt8]
            do {
                bytes = try fileSystem.readAll(file(logName))
            } catch {
                if case .ioFailure(_, _, let code) = error { result.issues.append(.unreadableFile(name: logName, errno: code)) }
                continue
            }
            let scan = OutboxFraming.scan(bytes, magic: OutboxFraming.segmentMagic)
            if !acknowledgementFiles.contains(id) {
                // A segment is created before its .acks file: an empty one is an interrupted start.
                if !scan.payloads.isEmpty || !scan.damage.isEmpty {
                    result.issues.append(.missingAcknowledgements(segment: logName))
                }
                if let descriptor = try? fileSystem.createForAppend(file(acknowledgementName), header: OutboxFraming.acknowledgementMagic) {
                    fileSystem.close(descriptor)
                }
            }
            for damage in scan.damage {
                switch damage {
                case .truncated(let offset, let count): result.issues.append(.truncatedTail(segment: logName, offset: offset, bytes: count))
                case .corrupt(let offset, let count): result.issues.append(.corruptRecords(segment: logName, offset: offset, bytes: count))
                }
            }
            result.index.addSegment(id, fileBytes: bytes.count)
            for frame in scan.payloads {
                guard let record = OutboxFraming.decodeEvent(frame.payload) else {
                    result.issues.append(.corruptRecords(segment: logName, offset: frame.offset, bytes: frame.payload.count + OutboxFraming.frameOverhead))
                    continue
                }
                highest = max(highest, record.sequence)
                guard !complete, !done.contains(record.sequence), result.index.entries[record.sequence] == nil,
                      result.index.sequence(ofMessageId: record.messageId) == nil
                else { continue }
                result.index.insert(record, segment: id, size: frame.payload.count + OutboxFraming.frameOverhead)
            }
        }
        result.index.sortOrder()
        result.nextSequence = highest + 1
        return result
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
