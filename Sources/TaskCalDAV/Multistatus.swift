import TaskInterchange

/// XML namespaces of WebDAV, CalDAV and the calendar server extensions.
enum NS {
    static let dav = "DAV:"
    static let caldav = "urn:ietf:params:xml:ns:caldav"
    static let calendarServer = "http://calendarserver.org/ns/"
    static let apple = "http://apple.com/ns/ical/"

    /// The prefix a response uses for a namespace (others get `x0:`… declared inline).
    static let prefixes = [dav: "d", caldav: "c", calendarServer: "cs", apple: "ical"]
}

/// A property name: namespace and local name.
struct PropertyName: Hashable {
    var namespace: String
    var name: String

    init(_ namespace: String, _ name: String) {
        self.namespace = namespace
        self.name = name
    }

    /// `<p:name>value</p:name>`, or an empty element when the value is empty.
    func element(_ value: String) -> String {
        let tag: String
        var declaration = ""
        if let p = NS.prefixes[namespace] {
            tag = "\(p):\(name)"
        } else {
            tag = "x0:\(name)"
            declaration = " xmlns:x0=\"\(XMLText.escaped(namespace))\""
        }
        return value.isEmpty ? "<\(tag)\(declaration)/>" : "<\(tag)\(declaration)>\(value)</\(tag)>"
    }
}

enum XMLText {
    static let escaped = ASCIIEscaper(["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "\r": "&#13;"])
}

/// A 207 Multi-Status body being written.
struct Multistatus {
    /// The root element's name (`d:multistatus`, or `c:mkcalendar-response` for MKCALENDAR).
    private let root: String
    private var body: String

    init(root: String = "d:multistatus") {
        self.root = root
        body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<\(root) xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\" xmlns:cs=\"http://calendarserver.org/ns/\" xmlns:ical=\"http://apple.com/ns/ical/\">"
    }

    /// One resource: the properties found (name and XML value) and those it lacks.
    mutating func add(href: String, found: [(PropertyName, String)], missing: [PropertyName]) {
        body += "<d:response><d:href>\(XMLText.escaped(href))</d:href>"
        if !found.isEmpty || missing.isEmpty {
            body += "<d:propstat><d:prop>" + found.map { $0.0.element($0.1) }.joined() + "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
        }
        if !missing.isEmpty {
            body += "<d:propstat><d:prop>" + missing.map { $0.element("") }.joined() + "</d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>"
        }
        body += "</d:response>"
    }

    /// A resource that is gone (in a sync report) or was not found (in a multiget).
    mutating func add(href: String, status: String) {
        body += "<d:response><d:href>\(XMLText.escaped(href))</d:href><d:status>HTTP/1.1 \(status)</d:status></d:response>"
    }

    /// The bytes written so far.
    var byteCount: Int { body.utf8.count }

    /// Text placed after the responses (a sync report's token).
    mutating func append(_ xml: String) { body += xml }

    var bytes: [UInt8] { Array((body + "</\(root)>\n").utf8) }
}
