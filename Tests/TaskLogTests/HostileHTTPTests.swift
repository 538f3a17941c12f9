import Foundation
import Synchronization
import Testing

/// A `tasklog serve` peer under attack: ids with bytes outside their grammar, clients that
/// trickle request heads to hold connections, and the checks users run after a push.
@Suite("hostile HTTP clients")
struct HostileHTTPTests {
    let dir = TemporaryDirectory()

    func store(_ name: String) -> CLIStore { CLIStore(path: dir.sub(name)) }

    @Test("an id holding %00 or another control byte gets 400 and creates nothing; a %-escaped valid id still works")
    func controlBytesInIDs() throws {
        let a = store("a")
        _ = try a.ok("init")
        let server = try ServerProcess(store: a.path, dir: dir)
        defer { server.stop() }
        for target in ["a%00b", "a%0ab", "a%1bb", "a%7f", "a%ff", "a%2"] {
            let r = HTTP.send("PUT", server.url + "/v1/tasks/" + target, json: #"{"title":"x"}"#)
            #expect(r.status == 400, "\(target): \(r.status) \(r.body)")
        }
        #expect(HTTP.send("GET", server.url + "/v1/tasks/a").status == 404)
        #expect(HTTP.send("PUT", server.url + "/v1/tasks/task%2D3", json: #"{"title":"kept"}"#).status == 201)
        #expect(try a.tasks().map { $0["id"] as? String } == ["task-3"])
    }

    @Test("300 connections trickling header lines are cut after the head timeout while authenticated requests keep being answered")
    func tricklingClients() throws {
        let a = store("a")
        try a.ok("add", "still served")
        let server = try ServerProcess(store: a.path, dir: dir)
        defer { server.stop() }
        let attackers = (0..<300).compactMap { _ in connectLoopback(server.port) }
        defer { for fd in attackers { close(fd) } }
        #expect(attackers.count == 300)
        for fd in attackers { _ = sendText(fd, "GET /v1/tasks HTTP/1.1\r\nHost: x\r\n") }
        let started = Date()
        var answered = 0
        var cut = Set<Int32>()
        while Date().timeIntervalSince(started) < 9 {
            for fd in attackers where !cut.contains(fd) {
                if !sendText(fd, "X-Slow: \(Int.random(in: 0...9))\r\n") || peerClosed(fd) { cut.insert(fd) }
            }
            let r = HTTP.send("GET", server.url + "/v1/tasks", timeout: 3)
            #expect(r.status == 200 && r.body.contains("still served"), "\(r.status) \(r.body)")
            if r.status == 200 { answered += 1 }
            usleep(250_000)
        }
        #expect(answered >= 10)
        #expect(cut.count == attackers.count, "\(attackers.count - cut.count) trickling connections were never cut")
    }

    @Test("after an HTTP push, replay --verify counts what status counts, and --json prints JSON")
    func verifyAfterPush() throws {
        let (a, b) = (store("a"), store("b"))
        try a.ok("add", "server side")
        try a.ok("compact")
        let server = try ServerProcess(store: a.path, dir: dir)
        defer { server.stop() }
        for i in 0..<5 { try b.ok("add", "pushed \(i)") }
        try b.ok("sync", server.url, "--token", "sekrit")
        let status = try JSONSerialization.jsonObject(with: Data(try a.ok("status", "--json").utf8)) as? [String: Any]
        let text = try a.ok("replay", "--verify")
        let verified = try JSONSerialization.jsonObject(with: Data(try a.ok("replay", "--verify", "--json").utf8)) as? [String: Any]
        let ops = try #require(status?["ops"] as? Int)
        #expect(verified?["verified"] as? Bool == true && verified?["ops"] as? Int == ops, "\(String(describing: verified))")
        #expect(text.contains("(\(ops) operations"), "\(text)")
    }
}

/// A blocking TCP connection to a loopback port, or nil.
func connectLoopback(_ port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = UInt16(port).bigEndian
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let ok = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    if ok == 0 { return fd }
    close(fd)
    return nil
}

/// Whether `text` was sent whole.
func sendText(_ fd: Int32, _ text: String) -> Bool {
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBytes { send(fd, $0.baseAddress!, bytes.count, Int32(MSG_NOSIGNAL)) } == bytes.count
}

/// Whether the other end has closed the connection (checked without waiting).
func peerClosed(_ fd: Int32) -> Bool {
    var byte: UInt8 = 0
    let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
}
