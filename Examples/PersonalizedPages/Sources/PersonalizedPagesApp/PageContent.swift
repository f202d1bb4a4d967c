import Foundation
import Optimization

/// The entries every page shows, prepared once at start-up and shared by all requests (content is
/// the same for every visitor; only which variant is rendered differs).
///
/// Thread-safe: immutable after ``load(fixturesDirectory:)``.
public struct PageContent: Sendable {
    /// File names under `Fixtures/entries/`, in page order: a hero (a personalization and an
    /// experiment), a promo strip (a personalization) and an article (an experiment).
    public static let entryFiles = ["hero-optimized.json", "unresolved-experience-link.json", "richtext-cycle.json"]

    /// The prepared baselines, in page order.
    public let entries: [ContentfulEntry]

    public init(entries: [ContentfulEntry]) {
        self.entries = entries
    }

    /// Reads and prepares ``entryFiles`` from `fixturesDirectory/entries/`.
    /// - Throws: ``PageContentError`` naming the file that is missing or not a Contentful entry.
    public static func load(fixturesDirectory: URL) throws(PageContentError) -> PageContent {
        var entries: [ContentfulEntry] = []
        for name in entryFiles {
            let url = fixturesDirectory.appendingPathComponent("entries", isDirectory: true).appendingPathComponent(name)
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw .unreadable(path: url.path, reason: "\(error.localizedDescription)")
            }
            do {
                entries.append(try ContentfulEntry(jsonData: data))
            } catch {
                throw .invalidEntry(path: url.path, reason: error.description)
            }
        }
        return PageContent(entries: entries)
    }
}

/// Why the page's entries could not be loaded at start-up.
public enum PageContentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be read (missing `--fixtures` folder, permissions).
    case unreadable(path: String, reason: String)
    /// The file is not a Contentful entry or CDA collection.
    case invalidEntry(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .invalidEntry(let path, let reason): "\(path) is not a Contentful entry: \(reason)"
        }
    }
}
