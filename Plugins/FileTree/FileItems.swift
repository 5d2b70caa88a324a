import Foundation
import Replica

#if canImport(Glibc)
import Glibc
#endif

/// Turns files into the events that make the index hold them as they are now.
///
/// A file becomes one item identified by its path within the root (`<source>:<path>`), never by its inode;
/// an mbox file becomes one item per message (`<source>:<path>#<n>`). A file that cannot be indexed —
/// binary, too large, unreadable, too slow to extract — is recorded as skipped with the reason, and any
/// item it had is removed.
struct FileItems: Sendable {
    let definition: SourceDefinition
    let scanner: TreeScanner
    let limits: ExtractionLimits
    /// How long items stay; `nil` keeps them (items from sources do not expire unless configured to).
    let lifetime: TimeInterval?

    func identifier(_ path: String) -> ItemIdentifier { definition.identifier(path) }

    /// What to do for a file that is gone.
    func removal(of path: String) -> [SourceEvent] {
        [
            .delete(identifier(path), entryKey: path),
            .deletePrefix(identifierPrefix: identifier(path + "#").rawValue, entryKeyPrefix: path + "#"),
        ]
    }

    /// What to do for a directory that is gone (or moved out of the root).
    func removal(ofTree directory: String) -> [SourceEvent] {
        [.deletePrefix(identifierPrefix: identifier(directory + "/").rawValue, entryKeyPrefix: directory + "/")]
    }

    /// What to do for something that will not be indexed.
    func skip(_ path: String, stamp: String, reason: String) -> [SourceEvent] {
        [
            .skip(SourceEntry(key: path, stamp: stamp, skipReason: reason), identifiers: [identifier(path)]),
            .deletePrefix(identifierPrefix: identifier(path + "#").rawValue, entryKeyPrefix: path + "#"),
        ]
    }

    /// Reads and extracts a file; the events that make the index hold it as it is now.
    func events(for file: FileInfo, now: Date) -> [SourceEvent] {
        if file.size > Int64(limits.maximumBytes) {
            return skip(
                file.path, stamp: file.stamp,
                reason:
                    "larger than the \(Self.megabytes(limits.maximumBytes)) limit (\(Self.megabytes(Int(file.size))))")
        }
        let bytes: [UInt8]
        switch read(file) {
        case .success(let data): bytes = data
        case .failure(let reason): return skip(file.path, stamp: file.stamp, reason: reason.message)
        }
        let name = String(file.path.split(separator: "/").last ?? Substring(file.path))
        switch TextExtractor.extract(fileName: name, bytes: bytes, limits: limits) {
        case .skipped(let reason):
            return skip(file.path, stamp: file.stamp, reason: reason)
        case .documents(let documents):
            let entry = SourceEntry(key: file.path, stamp: file.stamp)
            if documents.count == 1, documents[0].part == nil {
                return [
                    .deletePrefix(
                        identifierPrefix: identifier(file.path + "#").rawValue, entryKeyPrefix: file.path + "#"),
                    .upsert(item(documents[0], file: file, name: name, now: now), entry: entry),
                ]
            }
            guard !documents.isEmpty else {
                return skip(file.path, stamp: file.stamp, reason: "a mailbox with no messages")
            }
            var events: [SourceEvent] = [
                .delete(identifier(file.path), entryKey: nil),
                .deletePrefix(identifierPrefix: identifier(file.path + "#").rawValue, entryKeyPrefix: file.path + "#"),
            ]
            for (offset, document) in documents.enumerated() {
                events.append(
                    .upsert(item(document, file: file, name: name, now: now), entry: offset == 0 ? entry : nil))
            }
            return events
        }
    }

    /// The item of one document of a file.
    func item(_ document: ExtractedDocument, file: FileInfo, name: String, now: Date) -> SearchableItem {
        let key = document.part.map { file.path + "#" + $0 } ?? file.path
        var attributes = AttributeSet(contentType: ContentType(rawValue: document.contentType))
        attributes.title = document.title ?? document.subject ?? name
        attributes.displayName = name
        attributes.textContent = document.text
        attributes.path = scanner.absolute(file.path)
        attributes.contentModificationDate = document.date ?? file.modificationDate
        if let date = document.date { attributes.contentCreationDate = date }
        attributes[.fileSize] = .number(Double(file.size))
        if let subject = document.subject { attributes.subject = subject }
        if !document.authors.isEmpty {
            attributes.authors = document.authors.map {
                Person(displayName: $0.name, handles: $0.address.map { [$0] } ?? [])
            }
        }
        if !document.recipients.isEmpty {
            attributes.recipients = document.recipients.map {
                Person(displayName: $0.name, handles: $0.address.map { [$0] } ?? [])
            }
        }
        let expiration = lifetime.map { file.modificationDate.addingTimeInterval($0) } ?? .distantFuture
        return SearchableItem(
            uniqueIdentifier: identifier(key), domainIdentifier: definition.domain,
            attributeSet: attributes, expirationDate: expiration)
    }

    struct ReadFailure: Error { var message: String }

    private func read(_ file: FileInfo) -> Result<[UInt8], ReadFailure> {
        let descriptor = open(scanner.absolute(file.path), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(ReadFailure(message: TreeScanner.errorReason(errno))) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: Int(max(0, file.size)))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                Glibc.read(descriptor, $0.baseAddress! + filled, $0.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ReadFailure(message: TreeScanner.errorReason(errno)))
            }
            if count == 0 { break }
            filled += count
        }
        return .success(filled == bytes.count ? bytes : Array(bytes[..<filled]))
    }

    static func megabytes(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\((Double(bytes) / 1_048_576 * 10).rounded() / 10) MiB" : "\(bytes / 1024) KiB"
    }
}
