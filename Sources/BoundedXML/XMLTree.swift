import CXML2

/// An XML element read with libxml2: its namespace and local name, attributes, child
/// elements and text. Enough for WebDAV and CalDAV request bodies.
package struct XMLTree: Equatable, Sendable {
    package var namespace: String
    package var name: String
    package var attributes: [String: String]
    package var children: [XMLTree]
    package var text: String

    /// Why a body is not XML this server can read.
    package struct ParseError: Error, Equatable, CustomStringConvertible {
        package var description: String
        /// True when the body is well within XML but over ``XMLBounds``.
        package var isOverBound = false

        package init(description: String, isOverBound: Bool = false) {
            self.description = description
            self.isOverBound = isOverBound
        }
    }

    /// Parses a document within `bounds`. Entities are not expanded, no DTD or network
    /// resource is loaded, and libxml2's limits on depth and size apply.
    package static func parse(_ bytes: [UInt8], bounds: XMLBounds = XMLBounds()) throws(ParseError) -> XMLTree {
        guard !bytes.isEmpty, bytes.count < Int32.max else { throw ParseError(description: "the request body is empty") }
        try bounds.check(bytes)
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOCDATA.rawValue)
        let doc = bytes.withUnsafeBufferPointer { buf in
            buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buf.count) {
                xmlReadMemory($0, Int32(buf.count), "request.xml", "UTF-8", options)
            }
        }
        guard let doc else { throw ParseError(description: "the request body is not well-formed XML") }
        defer { xmlFreeDoc(doc) }
        guard let root = xmlDocGetRootElement(doc) else { throw ParseError(description: "the request body has no root element") }
        return element(root)
    }

    private static func element(_ node: xmlNodePtr) -> XMLTree {
        var tree = XMLTree(
            namespace: node.pointee.ns.map { String(cString: $0.pointee.href) } ?? "",
            name: String(cString: node.pointee.name), attributes: [:], children: [], text: "")
        var attribute = node.pointee.properties
        while let a = attribute {
            // An attribute's value is the text of its child nodes (entities are not expanded).
            var value = ""
            var part = a.pointee.children
            while let t = part {
                if let content = t.pointee.content { value += String(cString: content) }
                part = t.pointee.next
            }
            tree.attributes[String(cString: a.pointee.name)] = value
            attribute = a.pointee.next
        }
        var child = node.pointee.children
        while let c = child {
            switch c.pointee.type {
            case XML_ELEMENT_NODE: tree.children.append(element(c))
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = c.pointee.content { tree.text += String(cString: content) }
            default: break
            }
            child = c.pointee.next
        }
        return tree
    }

    /// The first child with this namespace and name.
    package func child(_ ns: String, _ name: String) -> XMLTree? { children.first { $0.namespace == ns && $0.name == name } }

    /// Every child with this namespace and name.
    package func all(_ ns: String, _ name: String) -> [XMLTree] { children.filter { $0.namespace == ns && $0.name == name } }

    package func `is`(_ ns: String, _ name: String) -> Bool { namespace == ns && self.name == name }
}
