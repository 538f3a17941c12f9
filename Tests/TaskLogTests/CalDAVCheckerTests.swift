import Foundation
import Testing

/// Public CalDAV checkers against `tasklog serve`, installed by scripts/install-deps.sh: the server
/// tests shipped in the source release of the Python `caldav` library (tests/test_caldav.py), and
/// caldav-server-tester from PyPI.
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

    /// caldav-server-tester (PyPI), in the same venv, run through Tests/Fixtures/caldav/server_tester.py.
    static let serverTesterVersion = "1.7.0"

    @Test("caldav-server-tester finds full support for every check that applies to a VTODO-only server")
    func serverTesterChecksPass() throws {
        guard FileManager.default.fileExists(atPath: "\(Self.tools)/ready-tester-\(Self.serverTesterVersion)") else {
            throw CLIHarnessError("caldav-server-tester is missing: run scripts/install-deps.sh")
        }
        let store = CLIStore(path: dir.sub("store"))
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let result = try CalDAVServerTests.run(
            "\(Self.tools)/venv/bin/python",
            [CalDAVServerTests.fixtures + "/caldav/server_tester.py", server.url + "/", "me", "sekrit"])
        #expect(result.status == 0, "\(result.stderr.suffix(3000))")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let verdicts = try #require(answer["vtodo"] as? [String: String])
        #expect(verdicts.count >= 37, "\(verdicts)")
        #expect(verdicts.filter { $0.value != "full" }.isEmpty, "not at full support: \(verdicts.filter { $0.value != "full" })")
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
