import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL server for tests: `initdb` into a new temporary directory, `postgres` on
/// `127.0.0.1` and a free port, trust authentication for the `postgres` role. It runs as a
/// non-root OS user (the server refuses to run as root): when the test process is root, as
/// ``PostgresTestServer/serverUser`` (created with `useradd --system` when missing) through
/// `runuser`; otherwise as the current user. Binaries are found with ``PostgresBinaries/locate()``.
///
/// With `tlsOnly`, the server accepts TLS connections only (`ssl = on`, a `hostssl`-only
/// `pg_hba.conf`, a self-signed certificate made by the `openssl` command at set-up) and
/// ``connectionString(database:)`` asks for `sslmode=require`.
///
/// Use ``withPostgresTestServer(tlsOnly:_:)``, which always stops the server and removes its directory,
/// also when the body throws. ``stop()`` and ``start()`` take the server away and bring it back on
/// the same port and data (for outage tests).
///
/// **Threading.** Not thread-safe for lifecycle calls (`start`/`stop`/`destroy`): call them from one
/// task. ``connectionString`` and ``port`` are immutable.
public final class PostgresTestServer: @unchecked Sendable {
    /// The OS user the server runs as when the tests run as root. Overridden by the environment
    /// variable `OPTIMIZATION_PG_TEST_USER`; `scripts/setup` creates it.
    public static var serverUser: String {
        ProcessInfo.processInfo.environment["OPTIMIZATION_PG_TEST_USER"] ?? "optimization-pg"
    }

    /// The bound loopback port.
    public let port: Int
    /// The temporary directory holding the cluster (`data/`), its socket and its log.
    public let directory: URL
    /// Where the server's binaries are.
    public let binaries: PostgresBinaries
    private var process: Process?
    private var watchdog: Process?
    private let runAsUser: String?
    /// Whether the server refuses connections without TLS.
    public let isTLSOnly: Bool

    /// `postgres://postgres@127.0.0.1:<port>/<database>?sslmode=disable` (`sslmode=require` for a
    /// TLS-only server).
    public func connectionString(database: String = "postgres") -> String {
        "postgres://postgres@127.0.0.1:\(port)/\(database)?sslmode=\(isTLSOnly ? "require" : "disable")"
    }

    /// Creates the cluster (`initdb`) in a new temporary directory and starts the server.
    /// - Parameters:
    ///   - readinessTimeout: bound of the wait for the server to accept connections (a failure
    ///     bound: a busy machine takes a second or two).
    ///   - tlsOnly: accept TLS connections only, with a self-signed certificate (`openssl` must
    ///     be on PATH).
    /// - Throws: ``PostgresTestServerError`` when a binary is missing, `initdb` or `openssl`
    ///   fails, or the server does not become ready in time (its log is in the error).
    public init(readinessTimeout: Duration = .seconds(60), tlsOnly: Bool = false) throws {
        isTLSOnly = tlsOnly
        binaries = try PostgresBinaries.locate()
        runAsUser = getuid() == 0 ? try Self.ensureServerUser() : nil
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("optimization-pg-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw PostgresTestServerError.setupFailed("mkdtemp failed: errno \(errno)") }
        directory = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        do {
            if let user = runAsUser {
                try Self.run("/bin/chown", ["-R", user, directory.path])
            }
            try Self.run(
                binaries.initdb.path,
                ["-D", directory.appendingPathComponent("data").path, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
                asUser: runAsUser, in: directory)
            if tlsOnly { try Self.requireTLS(data: directory.appendingPathComponent("data"), asUser: runAsUser) }
            port = try Self.freeLoopbackPort()
            try start(readinessTimeout: readinessTimeout)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    deinit {
        destroy()
    }

    /// Starts the server (again) on ``port`` and waits until it accepts connections.
    /// - Throws: ``PostgresTestServerError/notReady(_:)`` with the server's log.
    public func start(readinessTimeout: Duration = .seconds(60)) throws {
        guard process == nil else { return }
        let data = directory.appendingPathComponent("data").path
        try? FileManager.default.removeItem(atPath: data + "/postmaster.pid")  // a killed server's leftover
        let arguments = [
            "-D", data, "-p", "\(port)", "-h", "127.0.0.1", "-k", directory.path,
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
            "-c", "max_connections=200", "-c", "logging_collector=off",
        ] + (isTLSOnly ? ["-c", "ssl=on", "-c", "ssl_cert_file=server.crt", "-c", "ssl_key_file=server.key"] : [])
        let log = directory.appendingPathComponent("server.log")
        if !FileManager.default.fileExists(atPath: log.path) {
            FileManager.default.createFile(atPath: log.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        let process = Process()
        if let user = runAsUser {
            process.executableURL = URL(fileURLWithPath: try Self.which("runuser"))
            process.arguments = ["-u", user, "--", binaries.postgres.path] + arguments
        } else {
            process.executableURL = binaries.postgres
            process.arguments = arguments
        }
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        // The server's user may not be allowed into the test's working directory (PostgreSQL
        // needs to read it at start): run it from its own directory.
        process.currentDirectoryURL = directory
        try process.run()
        self.process = process
        startWatchdog()
        let deadline = ContinuousClock.now + readinessTimeout
        while ContinuousClock.now < deadline {
            if !process.isRunning { break }
            if let pidFile = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8),
               pidFile.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces) == "ready" {
                return
            }
            Thread.sleep(forTimeInterval: 0.02)  // polling a real process's readiness, bounded above
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        stopProcess()
        throw PostgresTestServerError.notReady(String(text.suffix(4000)))
    }

    /// Stops the server (fast shutdown: connections are closed) and waits for it to exit; the data
    /// stays for ``start(readinessTimeout:)``. Does nothing when it is not running.
    public func stop() {
        stopProcess()
    }

    /// Stops the server and removes its directory. Called by `deinit` too.
    public func destroy() {
        stopProcess()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A shell that stops the server and removes its directory if this (test) process ends
    /// without doing it (a crash or a kill): nothing is left running.
    private func startWatchdog() {
        watchdog?.terminate()
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 0.5; done
            pid=$(head -n 1 "$1/data/postmaster.pid" 2>/dev/null) && kill -INT "$pid" 2>/dev/null
            for _ in $(seq 1 100); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            rm -rf "$1"
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script, "watchdog", directory.path]
        shell.standardInput = FileHandle.nullDevice
        shell.standardOutput = FileHandle.nullDevice
        shell.standardError = FileHandle.nullDevice
        if (try? shell.run()) != nil { watchdog = shell }
    }

    private func stopProcess() {
        if let watchdog {
            self.watchdog = nil
            kill(watchdog.processIdentifier, SIGKILL)
            watchdog.waitUntilExit()
        }
        guard let process else { return }
        self.process = nil
        let data = directory.appendingPathComponent("data").path
        let postmaster = (try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8))
            .flatMap { $0.split(separator: "\n").first }.flatMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
        let target = postmaster ?? process.processIdentifier
        kill(target, SIGINT)  // fast shutdown
        if !Self.waitForExit(process, pid: target, timeout: .seconds(30)) {
            kill(target, SIGKILL)
            if process.processIdentifier != target { kill(process.processIdentifier, SIGKILL) }
            _ = Self.waitForExit(process, pid: target, timeout: .seconds(10))
        }
        process.waitUntilExit()
    }

    /// Waits until `process` has exited and `pid` is gone; false after `timeout`.
    private static func waitForExit(_ process: Process, pid: Int32, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !process.isRunning && kill(pid, 0) != 0 { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    // MARK: Helpers

    /// Makes the cluster in `data` TLS-only: a self-signed certificate and key (`server.crt`,
    /// `server.key`: mode 0600, owned by the server's user) and a `pg_hba.conf` that lets only
    /// TLS connections in over TCP.
    private static func requireTLS(data: URL, asUser user: String?) throws {
        let key = data.appendingPathComponent("server.key").path
        try run(try which("openssl"), [
            "req", "-new", "-x509", "-days", "2", "-nodes", "-subj", "/CN=127.0.0.1",
            "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-keyout", key, "-out", data.appendingPathComponent("server.crt").path,
        ], asUser: user, in: data.deletingLastPathComponent())
        try run("/bin/chmod", ["600", key], asUser: user)
        let rules = """
            local all all trust
            hostssl all all 127.0.0.1/32 trust
            hostnossl all all 0.0.0.0/0 reject

            """
        try run("/bin/sh", ["-c", "printf '%s' \"$1\" > \"$2\"", "write", rules, data.appendingPathComponent("pg_hba.conf").path], asUser: user)
    }

    /// The non-root user to run the server as; created (`useradd --system`) when missing.
    private static func ensureServerUser() throws -> String {
        let user = serverUser
        if getpwnam(user) == nil {
            try run(try which("useradd"), ["--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", user])
        }
        return user
    }

    /// A port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
    /// - Throws: ``PostgresTestServerError/setupFailed(_:)`` when a socket call fails.
    public static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PostgresTestServerError.setupFailed("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw PostgresTestServerError.setupFailed("bind failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw PostgresTestServerError.setupFailed("getsockname failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs `path arguments` (as `user` through runuser when given, from `directory` when given)
    /// and waits; throws with its output when it fails.
    static func run(_ path: String, _ arguments: [String], asUser user: String? = nil, in directory: URL? = nil) throws {
        let process = Process()
        if let user {
            process.executableURL = URL(fileURLWithPath: try which("runuser"))
            process.arguments = ["-u", user, "--", path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        if let directory { process.currentDirectoryURL = directory }
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PostgresTestServerError.setupFailed("\(path) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(text.suffix(2000))")
        }
    }

    /// The first `name` on PATH or in the system directories.
    static func which(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw PostgresTestServerError.binaryNotFound(name)
    }
}

/// Starts a ``PostgresTestServer``, runs `body`, and always destroys the server (stops it and
/// removes its directory), whether `body` returns or throws.
/// With `tlsOnly` the server accepts TLS connections only (see ``PostgresTestServer``).
public func withPostgresTestServer<T>(tlsOnly: Bool = false, _ body: (PostgresTestServer) async throws -> T) async throws -> T {
    let server = try PostgresTestServer(tlsOnly: tlsOnly)
    do {
        let result = try await body(server)
        server.destroy()
        return result
    } catch {
        server.destroy()
        throw error
    }
}

/// Why a ``PostgresTestServer`` could not be started.
public enum PostgresTestServerError: Error, CustomStringConvertible, Sendable {
    /// No such binary: run `scripts/setup` (it installs the `postgresql` package).
    case binaryNotFound(String)
    /// A set-up step failed (`initdb`, creating the user, a socket call).
    case setupFailed(String)
    /// The server did not accept connections in time; its log's end.
    case notReady(String)

    /// A sentence naming the failure.
    public var description: String {
        switch self {
        case .binaryNotFound(let name): "PostgreSQL binary \(name) not found; run scripts/setup (installs the postgresql package)"
        case .setupFailed(let detail): "PostgreSQL test server set-up failed: \(detail)"
        case .notReady(let log): "PostgreSQL test server did not become ready; its log ends with:\n\(log)"
        }
    }
}
