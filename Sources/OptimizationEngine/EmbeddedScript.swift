/// One script of `JSRuntime/`, embedded at build time by the EmbedJSRuntime plugin.
package struct EmbeddedScript: Sendable {
    /// Path relative to `JSRuntime/`, used as the script's source URL.
    package let path: String
    /// The script's text.
    package let source: String

    /// A script at `path` (relative to `JSRuntime/`) with the text `source`.
    package init(path: String, source: String) {
        self.path = path
        self.source = source
    }
}

/// The shared JavaScript in `JSRuntime/manifest.json` order (`scripts` is generated).
package enum EmbeddedJSRuntime {}
