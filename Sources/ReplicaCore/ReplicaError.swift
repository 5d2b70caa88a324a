public import Foundation

/// An error from replica: what went wrong, how to fix it, and where it came from.
///
/// `code` is a struct rather than an enum, so that new codes never break a caller's `switch`.
/// Messages never quote indexed content; they name identifiers, accounts, lines and fields instead.
///
/// For example:
/// ```swift
/// do { _ = try await store.search(SearchQuery("\"( )\"")) }
/// catch let error as ReplicaError where error.code == .invalidQuery { print(error.message) }
/// ```
public struct ReplicaError: Error, CustomStringConvertible, CustomDebugStringConvertible, LocalizedError, Sendable {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, such as "invalidArgument".
        public let rawValue: String
        /// Makes a code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// A query with no word that can be searched.
        public static let invalidQuery = Code(rawValue: "invalidQuery")
        /// An item that cannot be indexed as given (no identifier, a wrong attribute type, too large, …).
        public static let invalidItem = Code(rawValue: "invalidItem")
        /// An argument to an API call or command that is out of range or malformed.
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// An index or store file written by a newer replica.
        public static let newerSchema = Code(rawValue: "newerSchema")
        /// An index file that is damaged; it is rebuilt and its owner asked to reindex.
        public static let corruptIndex = Code(rawValue: "corruptIndex")
        /// A compare-and-swap batch whose expected client state did not match the stored one.
        public static let clientStateMismatch = Code(rawValue: "clientStateMismatch")
        /// An account that is not signed in.
        public static let accountNotSignedIn = Code(rawValue: "accountNotSignedIn")
        /// A write or delete of an item that another owner made (the API, the record store, a source, a
        /// followed table): each owner changes only its own items.
        public static let notOwner = Code(rawValue: "notOwner")
        /// A batch that was already ended.
        public static let batchEnded = Code(rawValue: "batchEnded")
        /// A file or directory that could not be read or written.
        public static let fileSystem = Code(rawValue: "fileSystem")
        /// A configuration file that could not be read.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// Something that is not there: an unknown source, record, or item.
        public static let notFound = Code(rawValue: "notFound")
        /// The database underneath failed in a way not covered above.
        public static let storage = Code(rawValue: "storage")
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and, where there is one, how to fix it.
    public var message: String
    /// The error underneath, if any.
    public var cause: (any Error)?
    /// Where the error was raised.
    public var fileID: String
    /// The line in ``fileID`` where the error was raised.
    public var line: Int

    /// Makes an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: What went wrong and how to fix it; it must not quote indexed content.
    ///   - cause: The error underneath, if any.
    ///   - fileID: Where the error was raised; the caller's file by default.
    ///   - line: The line where the error was raised; the caller's line by default.
    public init(
        _ code: Code, _ message: String, cause: (any Error)? = nil,
        fileID: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.cause = cause
        self.fileID = fileID
        self.line = line
    }

    /// The message.
    public var description: String { message }

    /// The message, for apps that show `localizedDescription` (it says what to do; it is in English).
    public var errorDescription: String? { message }

    /// The message with the error underneath and the place it was raised, for debugging.
    public var debugDescription: String {
        var text = "\(code): \(message) [\(fileID):\(line)]"
        if let cause { text += " — caused by: \(cause)" }
        return text
    }
}

extension ReplicaError {
    /// `error` in words for a person or a log line: a `ReplicaError`'s message, else the error's own
    /// description.
    package static func message(of error: any Error) -> String {
        (error as? ReplicaError)?.message ?? "\(error)"
    }
}
