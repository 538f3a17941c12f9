import Foundation
import Testing

/// A public CalDAV checker against `tasklog serve`: the server tests shipped in the source release
/// of the Python `caldav` library (tests/test_caldav.py), installed by scripts/install-deps.sh.
@Suite("CalDAV checker")
struct CalDAVCheckerTests {
    let dir = TemporaryDirectory()
    static let version = "3.6.0"
    static let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/test-tools/caldav").path

    /// What a VTODO-only server declares unsupported, in the checker's own feature names.
    static let unsupported = [
        "save-load.event", "save-load.journal", "scheduling", "freebusy-query",
        "search.recurrences.includes-implicit.todo",
    ]

    /// Test groups that need a feature this server lacks (events, alarms, recurrence expansion,
    /// writable calendar properties), the compatibility self-check, and `testPrincipals`, whose own
    /// call raises a DeprecationWarning that pytest turns into an error. `testTodoDatesearch`
    /// filters on CREATED client-side, which this server sets from its clock (Spec/interop.md).
    static let excluded = [
        "testCheckCompatibility", "Event", "Alarm", "Recurr", "WithoutCompType", "testSetCalendarProperties",
        "testPrincipals", "testGetSupportedComponents", "NeverIssued", "SearchShouldYieldData", "testTodoDatesearch",
    ]

    static func configuration(url: String) -> String {
        let features = unsupported.map { "        \($0): {support: unsupported}" }.joined(separator: "\n")
        return """
            test-servers:
              radicale: {type: embedded, enabled: false}
              xandikos: {type: embedded, enabled: false}
              tasklog:
                type: external
                enabled: true
                url: \(url)/
                username: me
                password: sekrit
                features:
            \(features)

            """
    }

    @Test("the caldav library's own server tests pass against tasklog serve")
    func caldavLibraryServerTestsPass() throws {
        let source = "\(Self.tools)/caldav-\(Self.version)"
        let python = "\(Self.tools)/venv/bin/python"
        guard FileManager.default.fileExists(atPath: "\(Self.tools)/ready-\(Self.version)") else {
            throw CLIHarnessError("the caldav checker is missing: run scripts/install-deps.sh")
        }
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "Seed task", "--list", "home")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let work = dir.sub("checker")
        try FileManager.default.createDirectory(atPath: work + "/tests", withIntermediateDirectories: true)
        try Self.configuration(url: server.url).write(toFile: work + "/tests/caldav_test_servers.yaml", atomically: true, encoding: .utf8)
        let selection = "TestForServertasklog and " + Self.excluded.map { "not \($0)" }.joined(separator: " and ")
        let result = try CalDAVServerTests.run(
            python,
            ["-m", "pytest", source + "/tests/test_caldav.py", "-q", "-p", "no:cacheprovider",
             "-o", "asyncio_default_fixture_loop_scope=function", "-k", selection],
            environment: ["PYTHONPATH": source, "PYTHON_CALDAV_TEST_DOCKER": "0"],
            directory: work)
        let summary = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(result.status == 0, "\(result.stdout.suffix(4000))\(result.stderr.suffix(2000))")
        #expect(summary.contains("20 passed") && !summary.contains("failed"), "\(summary)")
    }
}
