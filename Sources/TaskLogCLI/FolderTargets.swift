@_spi(Engine) import TaskSync

extension Context {
    /// The schemes of shared folders that live on a server rather than in a local folder.
    static let remoteFolderSchemes = ["s3://", "webdav://", "webdavs://"]

    /// The storage of a folder `target`: a local folder, or a bucket or WebDAV folder when
    /// this process has the HTTP libraries; nil when `tasklog-http` must take the command over.
    func folderStorage(_ target: String) throws -> (any FolderStorage)? {
        guard Self.remoteFolderSchemes.contains(where: target.hasPrefix) else { return LocalFolderStorage(folder: target) }
        guard let http else { return nil }
        return try http.folderStorage(target, self)
    }
}
