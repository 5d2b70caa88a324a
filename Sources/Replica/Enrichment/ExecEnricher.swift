import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A summarizer or priority classifier in another program: a host brings its own (a language model, say)
/// without linking it into replica.
///
/// The program is started once per message enriched. It reads one JSON line on standard input,
///
///     {"request": "summarize" | "priority", "thread": {"domain": …, "me": […], "messages": [
///         {"uniqueIdentifier", "authors": […], "recipients": […], "primaryRecipients": […],
///          "date": ISO 8601 or null, "subject": … or null, "text": …}, …]}}
///
/// (messages oldest first; the last is the one to enrich), writes one JSON line on standard output,
/// `{"summary": "…"}` or `{"isPriority": true | false}`, and exits 0. Anything else — another exit
/// status, no answer within `timeout`, a line that is not that object — is a failure: the item stays
/// waiting and is tried again later. What the program writes on standard error is not read.
///
/// For example:
/// ```swift
/// var configuration = Store.Configuration()
/// configuration.enrichment.summarizer = ExecEnricher(command: ["/usr/local/bin/summarize-thread"])
/// ```
public struct ExecEnricher: Summarizer, PriorityClassifier {
    /// The program and its arguments.
    public var command: [String]
    /// The longest wait for an answer, in seconds.
    public var timeout: TimeInterval

    /// Creates an enricher that runs `command` (the program, then its arguments), waiting at most `timeout`
    /// seconds for each answer.
    public init(command: [String], timeout: TimeInterval = 60) {
        self.command = command
        self.timeout = timeout
    }

    /// `exec:` followed by the command and its arguments, separated by spaces.
    public var identifier: String { "exec:" + command.joined(separator: " ") }

    /// Asks the program for a summary of `thread` (a `summarize` request).
    ///
    /// - Parameter thread: the conversation, its last message the one to summarize.
    /// - Returns: the `summary` string of the program's answer.
    /// - Throws: `ReplicaError` with code `fileSystem` when the program cannot be started, and
    ///   `invalidConfiguration` when it fails, does not answer within ``timeout``, or answers without a
    ///   `summary` string.
    public func summarize(_ thread: MessageThread) async throws -> String {
        let answer = try await ask("summarize", thread)
        guard let summary = answer["summary"]?.stringValue else { throw failure("its answer has no \"summary\" string") }
        return summary
    }

    /// Asks the program whether the last message of `thread` is a priority (a `priority` request).
    ///
    /// - Parameter thread: the conversation, its last message the one to classify.
    /// - Returns: the `isPriority` flag of the program's answer.
    /// - Throws: `ReplicaError` with code `fileSystem` when the program cannot be started, and
    ///   `invalidConfiguration` when it fails, does not answer within ``timeout``, or answers without an
    ///   `isPriority` true or false.
    public func isPriority(_ thread: MessageThread) async throws -> Bool {
        let answer = try await ask("priority", thread)
        guard let flag = answer["isPriority"]?.boolValue else { throw failure("its answer has no \"isPriority\" true or false") }
        return flag
    }

    /// The request as one JSON line.
    static func request(_ kind: String, _ thread: MessageThread) -> JSON {
        .object([
            ("request", .string(kind)),
            ("thread", .object([
                ("domain", .string(thread.domain.rawValue)),
                ("me", .array(thread.me.map(JSON.string))),
                ("messages", .array(thread.messages.map { message in
                    .object([
                        ("uniqueIdentifier", .string(message.identifier.rawValue)),
                        ("authors", .array(message.authors.map(JSON.string))),
                        ("recipients", .array(message.recipients.map(JSON.string))),
                        ("primaryRecipients", .array(message.primaryRecipients.map(JSON.string))),
                        ("date", message.date.map { .string(ISO8601.string(from: $0)) } ?? .null),
                        ("subject", message.subject.map(JSON.string) ?? .null),
                        ("text", .string(message.text)),
                    ])
                })),
            ])),
        ])
    }

    private func ask(_ kind: String, _ thread: MessageThread) async throws -> JSON {
        let line = Self.request(kind, thread).serialized() + "\n"
        let (command, timeout) = (command, timeout)
        return try await Blocking.run {
            let child = try ChildProcess(command, standardInput: .pipe, standardOutput: .pipe)
            // The answer is read on this thread while another writes the request, so neither side can
            // block the other on a full pipe.
            let writer = Thread {
                try? child.standardInput?.write(contentsOf: Data(line.utf8))
                try? child.standardInput?.close()
            }
            writer.start()
            let output = Mutex(Data())
            let read = DispatchSemaphore(value: 0)
            let reader = Thread {
                let data = (try? child.standardOutput?.readToEnd()) ?? nil
                output.withLock { $0 = data ?? Data() }
                read.signal()
            }
            reader.start()
            guard let ending = child.wait(timeout: timeout) else {
                child.signal(SIGKILL)
                child.waitUntilExit()
                throw failure("it did not answer within \(Int(timeout)) seconds")
            }
            // The child has exited: its end of the pipe is closed, so the read ends soon.
            guard read.wait(timeout: .now() + 5) == .success else { throw failure("its standard output stayed open after it exited") }
            guard !ending.wasSignaled, ending.status == 0 else {
                throw failure(ending.wasSignaled ? "it was killed by signal \(ending.status)" : "it exited with status \(ending.status)")
            }
            let text = String(decoding: output.withLock { $0 }, as: UTF8.self)
            guard let first = text.split(separator: "\n").first, let answer = try? JSON.parse(String(first)), answer.objectValue != nil else {
                throw failure("it did not write one JSON object on a line")
            }
            return answer
        }
    }

    private func failure(_ problem: String) -> ReplicaError {
        ReplicaError(.invalidConfiguration, "the enrichment program \(command.first ?? "") failed: \(problem)")
    }
}
