public import Foundation

/// A fresh directory under the system's temporary folder, removed when the value is released.
///
/// For example:
/// ```swift
/// let directory = try TemporaryDirectory()
/// let store = try Store(directory: directory.url)
/// ```
public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(_ prefix: String = "replica-test") throws {
        var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CocoaError(.fileWriteUnknown)
        }
        url = URL(fileURLWithPath: String(cString: created)).standardizedFileURL
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A path inside the directory.
    public func appending(_ component: String) -> URL {
        url.appendingPathComponent(component)
    }

    /// Every regular file under the directory, recursively.
    public func allFiles() -> [URL] {
        Self.allFiles(under: url)
    }

    /// Every regular file under `url`, recursively (not into other file systems mounted below it). A
    /// directory that cannot be listed is returned too, so that a scan reading it fails rather than
    /// passing over it.
    public static func allFiles(under url: URL) -> [URL] {
        var unreadable: [URL] = []
        guard
            let enumerator = FileManager.default.enumerator(
                at: url, includingPropertiesForKeys: [.isRegularFileKey], options: [],
                errorHandler: { failed, _ in
                    unreadable.append(failed)
                    return true
                })
        else { return [url] }
        let files = enumerator.compactMap { $0 as? URL }.filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
        return files + unreadable
    }

    /// Whether anything is at `file`'s path, the link itself if it is one.
    private static func stillThere(_ file: URL) -> Bool {
        var status = stat()
        return lstat(file.path, &status) == 0 || errno != ENOENT
    }

    /// The files under the directory whose raw bytes contain `needle`.
    public func filesContaining(_ needle: String) -> [URL] {
        Self.filesContaining(needle, under: url)
    }

    /// The files under `url` whose raw bytes contain `needle`, and every file that could not be read: a
    /// file the scan cannot read might hold the needle, so it never counts as clean. A file gone between
    /// the listing and its reading holds nothing any more (PostgreSQL unlinks its relation cache's
    /// `pg_internal.init` when a catalog changes), so it is passed over.
    ///
    /// - Parameter read: how a file is read (tests of the scan itself make it fail).
    public static func filesContaining(
        _ needle: String, under url: URL,
        read: (URL) throws -> Data = { try Data(contentsOf: $0) }
    ) -> [URL] {
        let bytes = Data(needle.utf8)
        return allFiles(under: url).filter { file in
            guard let data = try? read(file) else { return Self.stillThere(file) }
            return data.range(of: bytes) != nil
        }
    }
}
