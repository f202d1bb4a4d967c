// This package builds on Linux, where GTK's JavaScriptCore (libjavascriptcoregtk-4.1-dev) provides
// the engine through pkg-config. Apple platforms ship a different JavaScriptCore framework that
// the module map does not describe.
#if !os(Linux)
#error("swift-optimization-linux builds on Linux only: it needs GTK's JavaScriptCore (libjavascriptcoregtk-4.1-dev)")
#endif
