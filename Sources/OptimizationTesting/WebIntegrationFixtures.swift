import Foundation
import Optimization

/// What the tests of a web integration (Integrations/) render and seal: the repository's optimized
/// hero entry with the variant ids ``LocalOptimizationAPIServer`` selects, and visitor-state keys.
///
/// Reads `Fixtures/entries/hero-optimized.json` of the repository this file is built from: for
/// tests inside the repository only.
public enum WebIntegrationFixtures {
    /// The repository's `Fixtures` folder.
    public static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// The optimized hero entry: baseline ``heroBaseline``, variant ``heroForNewVisitor`` for the
    /// local server's new visitor, ``heroForIdentified`` for its identified visitor.
    /// - Note: traps when the fixture is missing or invalid: a broken checkout, not a test outcome.
    public static let hero: ContentfulEntry = {
        let url = directory.appendingPathComponent("entries/hero-optimized.json")
        guard let bytes = try? Data(contentsOf: url), let entry = try? ContentfulEntry(jsonData: Array(bytes)) else {
            fatalError("the fixture \(url.path) is missing or not a Contentful entry")
        }
        return entry
    }()
    /// The hero's baseline entry id.
    public static let heroBaseline = "3kPfV7sQy1ZcN0aRbW4xLm"
    /// The hero variant the local server's new visitor sees.
    public static let heroForNewVisitor = "5pNs7JcXq2LmRb9VtKw1Hz"
    /// The hero variant the local server's identified visitor sees.
    public static let heroForIdentified = "2xWcL5nRg8HtVq0JpZs4Ke"

    /// Visitor-state keys of the test apps (one fixed 32-byte key).
    public static let keys: VisitorStateKeys = {
        guard let keys = try? VisitorStateKeys(base64Encoded: ["dGVzdC1rZXktb2YtdGhlLWh1bW1pbmdiaXJkLXRlc3Rz"]) else {
            fatalError("the fixed test key does not decode")
        }
        return keys
    }()
}
