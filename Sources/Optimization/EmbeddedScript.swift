/// One script of `JSRuntime/`, embedded at build time by the EmbedJSRuntime plugin.
struct EmbeddedScript: Sendable {
    /// Path relative to `JSRuntime/`, used as the script's source URL.
    let path: String
    let source: String
}

/// The shared JavaScript in `JSRuntime/manifest.json` order (`scripts` is generated).
enum EmbeddedJSRuntime {}
