public import Foundation

/// One record of an app's canonical data: a note, a task, a message.
///
/// `version` comes from the app's sync layer; a higher version is newer. A record with `isDeleted` is a
/// tombstone: it removes the record's item and keeps any older write from bringing it back.
///
/// For example:
/// ```swift
/// let note = Record(account: "alice", kind: "note", id: "42", version: 7,
///                   fields: ["title": "Launch plan", "body": "The launch risk is the supplier."])
/// _ = try await store.records.write([note])
/// ```
public struct Record: Sendable, Equatable {
    /// The account that owns the record.
    public var account: AccountID
    /// The record's kind, such as `note`, which picks the projection it goes through.
    public var kind: String
    /// The record's identifier within its account and kind.
    public var id: String
    /// The version from the app's sync layer; a higher version is newer.
    public var version: Int64
    /// Whether the record is a tombstone: it removes the record's item.
    public var isDeleted: Bool
    /// The accounts allowed to read the record; `nil` means the owning account only.
    public var readers: [AccountID]?
    /// When the record was last changed, as the app knows it.
    public var modified: Date?
    /// The record's fields, as a JSON object.
    public var fields: [(String, JSON)]

    /// Creates a record from its parts, its fields as name and value pairs in order.
    public init(
        account: AccountID, kind: String, id: String, version: Int64, isDeleted: Bool = false,
        readers: [AccountID]? = nil, modified: Date? = nil, fields: [(String, JSON)] = []
    ) {
        self.account = account
        self.kind = kind
        self.id = id
        self.version = version
        self.isDeleted = isDeleted
        self.readers = readers
        self.modified = modified
        self.fields = fields
    }

    /// A record whose fields are written as a dictionary literal, kept in the order written.
    ///
    /// For example:
    /// ```swift
    /// let note = Record(account: "alice", kind: "note", id: "42", version: 7,
    ///                   fields: ["title": "Launch plan", "pinned": true, "stars": 3])
    /// ```
    public init(
        account: AccountID, kind: String, id: String, version: Int64, isDeleted: Bool = false,
        readers: [AccountID]? = nil, modified: Date? = nil, fields: KeyValuePairs<String, JSON>
    ) {
        self.init(
            account: account, kind: kind, id: id, version: version, isDeleted: isDeleted, readers: readers,
            modified: modified, fields: fields.map { ($0.key, $0.value) })
    }

    /// A record whose fields are the properties of an `Encodable` value (dates as ISO 8601 text).
    ///
    /// For example:
    /// ```swift
    /// struct Note: Codable { var title: String; var body: String }
    /// let record = try Record(account: "alice", kind: "note", id: "42", version: 7,
    ///                         encoding: Note(title: "Launch plan", body: "The launch risk …"))
    /// ```
    ///
    /// - Throws: `ReplicaError` with code `invalidItem` when the value does not encode as a JSON object.
    public init(
        account: AccountID, kind: String, id: String, version: Int64, isDeleted: Bool = false,
        readers: [AccountID]? = nil, modified: Date? = nil, encoding value: some Encodable
    ) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let encoded: JSON
        do {
            encoded = try JSON.parse(bytes: Array(encoder.encode(value)))
        } catch {
            throw ReplicaError(
                .invalidItem,
                "the fields of account '\(account)', kind '\(kind)', id '\(id)' could not be encoded as JSON",
                cause: error)
        }
        guard let fields = encoded.objectValue else {
            throw ReplicaError(
                .invalidItem,
                "the fields of account '\(account)', kind '\(kind)', id '\(id)' must encode as a JSON object, not \(encoded.kindDescription)"
            )
        }
        self.init(
            account: account, kind: kind, id: id, version: version, isDeleted: isDeleted, readers: readers,
            modified: modified, fields: fields)
    }

    /// Whether two records are equal in every property, their fields compared as JSON objects.
    public static func == (lhs: Record, rhs: Record) -> Bool {
        lhs.account == rhs.account && lhs.kind == rhs.kind && lhs.id == rhs.id && lhs.version == rhs.version
            && lhs.isDeleted == rhs.isDeleted && lhs.readers == rhs.readers && lhs.modified == rhs.modified
            && JSON.object(lhs.fields) == JSON.object(rhs.fields)
    }

    /// The value of a field, if present and not null.
    public subscript(field: String) -> JSON? {
        let value = fields.last(where: { $0.0 == field })?.1
        return value?.isNull == true ? nil : value
    }

    /// Whether `account` may read the record.
    public func isReadable(by account: AccountID) -> Bool {
        readers.map { $0.contains(account) } ?? (account == self.account)
    }

    /// Names the record in messages and logs: account, kind and id, never content.
    public var reference: String { "account '\(account)', kind '\(kind)', id '\(id)'" }

    /// Kind names may use letters, digits, `-` and `_` (they become part of domains and identifiers).
    static func validateKind(_ kind: String) throws {
        let valid =
            !kind.isEmpty && kind.count <= 64
            && kind.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
            }
        if !valid {
            throw ReplicaError(.invalidItem, "kind '\(kind)' must be 1 to 64 ASCII letters, digits, '-' or '_'")
        }
    }

    /// Checks what the record store needs before it stores the record.
    public func validate() throws {
        try account.validate()
        try Self.validateKind(kind)
        if id.isEmpty { throw ReplicaError(.invalidItem, "a record needs a non-empty id (\(reference))") }
        if id.utf8.count > 512 {
            throw ReplicaError(.invalidItem, "a record id can be at most 512 bytes (\(reference))")
        }
        if id.utf8.contains(0) {
            throw ReplicaError(
                .invalidItem,
                "a record id cannot hold the character U+0000 (NUL), which no command can name: take it out (kind '\(kind)')"
            )
        }
        for reader in readers ?? [] { try reader.validate() }
    }
}

// MARK: - JSON lines

extension Record {
    /// Reads a record from one line of `replica records import`:
    /// `{"account": …, "kind": …, "id": …, "version": 7, "deleted": false, "readers": […], "modified": …, "fields": {…}}`.
    ///
    /// - Throws: `ReplicaError` with code `invalidItem` naming the missing or malformed member.
    public init(json: JSON) throws {
        guard json.objectValue != nil else {
            throw ReplicaError(.invalidItem, "each line must be a JSON object, not \(json.kindDescription)")
        }
        func requiredString(_ name: String) throws -> String {
            guard let value = json[name], !value.isNull else {
                throw ReplicaError(.invalidItem, "the record has no '\(name)'")
            }
            guard let text = value.stringValue else {
                throw ReplicaError(.invalidItem, "'\(name)' must be a string, not \(value.kindDescription)")
            }
            return text
        }
        let account = AccountID(try requiredString("account"))
        let kind = try requiredString("kind")
        let id = try requiredString("id")
        let reference = "account '\(account)', kind '\(kind)', id '\(id)'"
        guard let versionValue = json["version"], !versionValue.isNull else {
            throw ReplicaError(.invalidItem, "the record has no 'version' (\(reference))")
        }
        guard let version = versionValue.intValue else {
            throw ReplicaError(
                .invalidItem,
                "'version' must be a whole number from -9223372036854775808 to 9223372036854775807 (2^63-1), written without a fraction (beyond 2^53, in plain digits) (\(reference))"
            )
        }
        var deleted = false
        if let value = json["deleted"], !value.isNull {
            guard let flag = value.boolValue else {
                throw ReplicaError(.invalidItem, "'deleted' must be true or false (\(reference))")
            }
            deleted = flag
        }
        var readers: [AccountID]?
        if let value = json["readers"], !value.isNull {
            guard let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
                throw ReplicaError(.invalidItem, "'readers' must be an array of account IDs (\(reference))")
            }
            readers = array.compactMap(\.stringValue).map(AccountID.init(rawValue:))
        }
        var modified: Date?
        if let value = json["modified"], !value.isNull {
            guard let text = value.stringValue, let date = ISO8601.date(from: text) else {
                throw ReplicaError(.invalidItem, "'modified' must be an ISO 8601 date (\(reference))")
            }
            modified = date
        }
        var fields: [(String, JSON)] = []
        if let value = json["fields"], !value.isNull {
            guard let members = value.objectValue else {
                throw ReplicaError(.invalidItem, "'fields' must be an object (\(reference))")
            }
            fields = members
        }
        self.init(
            account: account, kind: kind, id: id, version: Int64(version), isDeleted: deleted, readers: readers,
            modified: modified, fields: fields)
        try validate()
    }
}
