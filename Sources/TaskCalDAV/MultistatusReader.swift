#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import BoundedXML
import CXML2

/// Reads a server's 207 Multi-Status answer as it arrives, with libxml2's push parser. Of
/// the document it holds only the response being read (its href, and the ETag and calendar
/// data of its 200 propstat), handed to `take` when it ends: memory never follows the
/// document's size or shape.
/// No entity is declared or loaded: a reference to one makes the answer unreadable.
final class MultistatusReader {
    /// One `response` element.
    struct Response: Equatable {
        var href = ""
        var etag: String?
        var calendarData: String?
    }

    /// The elements the reader follows; anything else is `.other` and its text is dropped.
    private enum Element {
        case multistatus, response, href, propstat, prop, status, etag, calendarData, other
    }

    private let take: (Response) -> Void
    private var context: xmlParserCtxtPtr?
    private var open: [Element] = []
    private var text: [UInt8] = []
    private var response = Response()
    private var propstat: (status: String, etag: String?, data: String?) = ("", nil, nil)

    init(take: @escaping (Response) -> Void) {
        self.take = take
        var sax = xmlSAXHandler()
        sax.initialized = XML_SAX2_MAGIC
        sax.startElementNs = { ctx, name, _, uri, _, _, _, _, _ in
            Unmanaged<MultistatusReader>.fromOpaque(ctx!).takeUnretainedValue().start(uri, name)
        }
        sax.endElementNs = { ctx, _, _, _ in Unmanaged<MultistatusReader>.fromOpaque(ctx!).takeUnretainedValue().end() }
        sax.characters = { ctx, bytes, count in
            Unmanaged<MultistatusReader>.fromOpaque(ctx!).takeUnretainedValue().characters(bytes, count)
        }
        sax.cdataBlock = sax.characters
        let me = Unmanaged.passUnretained(self).toOpaque()
        context = xmlCreatePushParserCtxt(&sax, me, nil, 0, "answer.xml")
        let options = XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
        if let context { xmlCtxtUseOptions(context, Int32(options)) }
    }

    deinit { if let context { xmlFreeParserCtxt(context) } }

    /// Parses the next piece of the answer; false once it is not well-formed XML.
    func feed(_ piece: UnsafeRawBufferPointer) -> Bool {
        guard let context, context.pointee.wellFormed != 0 else { return false }
        var offset = 0
        while offset < piece.count, let base = piece.baseAddress {
            // xmlParseChunk takes an Int32 length.
            let count = min(piece.count - offset, 1 << 20)
            _ = xmlParseChunk(context, (base + offset).assumingMemoryBound(to: CChar.self), Int32(count), 0)
            offset += count
        }
        return context.pointee.wellFormed != 0
    }

    /// Ends the document. - Throws: why the answer is not a multistatus.
    func finish() throws(XMLTree.ParseError) {
        guard let context else { throw XMLTree.ParseError(description: "libxml2 could not start a parser") }
        _ = xmlParseChunk(context, nil, 0, 1)
        guard context.pointee.wellFormed != 0 else { throw XMLTree.ParseError(description: "the answer is not well-formed XML") }
        guard sawRoot else { throw XMLTree.ParseError(description: "the answer is not a DAV:multistatus") }
    }

    private var sawRoot = false

    private func start(_ uri: UnsafePointer<xmlChar>?, _ name: UnsafePointer<xmlChar>?) {
        let inDAV = Self.equal(uri, "DAV:")
        let element: Element
        switch (open.last, inDAV ? Self.string(name) : "") {
        case (nil, "multistatus"): element = .multistatus
        case (.multistatus, "response"): element = .response
        case (.response, "href"): element = .href
        case (.response, "propstat"): element = .propstat
        case (.response, "status"), (.propstat, "status"): element = .status
        case (.propstat, "prop"): element = .prop
        case (.prop, "getetag"): element = .etag
        case (.prop, _) where Self.equal(uri, NS.caldav) && Self.equal(name, "calendar-data"): element = .calendarData
        default: element = .other
        }
        if open.isEmpty { sawRoot = element == .multistatus }
        switch element {
        case .response: response = Response()
        case .propstat: propstat = ("", nil, nil)
        default: break
        }
        text.removeAll(keepingCapacity: true)
        open.append(element)
    }

    private func end() {
        guard let element = open.popLast() else { return }
        let value = String(decoding: text, as: UTF8.self)
        switch element {
        case .href where response.href.isEmpty: response.href = value
        case .status where open.last == .propstat: propstat.status = value
        case .etag: propstat.etag = value
        case .calendarData: propstat.data = value
        case .propstat where propstat.status.contains(" 200 "):
            response.etag = propstat.etag ?? response.etag
            response.calendarData = propstat.data ?? response.calendarData
        case .response where !response.href.isEmpty: take(response)
        default: break
        }
        text.removeAll(keepingCapacity: true)
    }

    private func characters(_ bytes: UnsafePointer<xmlChar>?, _ count: Int32) {
        switch open.last {
        case .href, .status, .etag, .calendarData:
            if let bytes { text.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(count))) }
        default: break
        }
    }

    private static func equal(_ a: UnsafePointer<xmlChar>?, _ b: String) -> Bool {
        guard let a else { return false }
        return b.withCString { strcmp(UnsafeRawPointer(a).assumingMemoryBound(to: CChar.self), $0) == 0 }
    }

    private static func string(_ a: UnsafePointer<xmlChar>?) -> String { a.map { String(cString: $0) } ?? "" }
}
