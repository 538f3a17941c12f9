#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The whole-file operations that sealing and merging a replica's log make: the seam tests
/// replace to stop a seal or a merge between any two of its steps, as a crash would.
///
/// Appending to the tail is not behind it: that path writes through an open descriptor.
package protocol LogFileSystem: Sendable {
    /// The whole file, or nil if it does not exist.
    func read(_ path: String) throws(StoreError) -> [UInt8]?
    /// The names in a folder.
    func list(_ folder: String) throws(StoreError) -> [String]
    /// A file's size, or nil if it does not exist.
    func size(_ path: String) -> Int?
    func exists(_ path: String) -> Bool
    /// Writes `bytes` to a new synced file beside `path`, returning its name (write-temp's
    /// first half).
    func writeTemporary(beside path: String, _ bytes: [UInt8]) throws(StoreError) -> String
    /// Renames a temporary file over `path` and syncs the folder (write-temp's second half).
    func install(_ temporary: String, as path: String) throws(StoreError)
    func remove(_ path: String)
    func syncFolder(_ folder: String) throws(StoreError)
}

extension LogFileSystem {
    /// Creates or replaces `path` atomically: readers see the old file or the new one.
    func writeAtomically(_ path: String, _ bytes: [UInt8]) throws(StoreError) {
        try install(try writeTemporary(beside: path, bytes), as: path)
    }
}

/// The real file system.
package struct PosixFileSystem: LogFileSystem {
    package init() {}

    package func read(_ path: String) throws(StoreError) -> [UInt8]? { try Posix.readFile(path) }
    package func list(_ folder: String) throws(StoreError) -> [String] { try Posix.list(folder) }
    package func size(_ path: String) -> Int? { Posix.fileSize(path) }
    package func exists(_ path: String) -> Bool { Posix.exists(path) }

    package func writeTemporary(beside path: String, _ bytes: [UInt8]) throws(StoreError) -> String {
        try Posix.writeTemporary(beside: path, bytes)
    }

    package func install(_ temporary: String, as path: String) throws(StoreError) { try Posix.install(temporary, as: path) }
    package func remove(_ path: String) { unlink(path) }
    package func syncFolder(_ folder: String) throws(StoreError) { try Posix.fsyncDirectory(folder) }
}
