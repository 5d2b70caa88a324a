public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A summarizer or priority classifier in another program: a host brings its own (a language model, say)
/// without linking it into replica.
///
/// The program is a plugin speaking the out-of-process protocol of sources (`Plugins/README.md`), in
/// mode `enrich`: one JSON object a line each way. It is started at the first request and kept running,
/// so a model loads once:
///
///     → {"type": "start", "mode": "enrich"}
///     → {"type": "summarize" | "classify", "request": "e1", "thread": {"domain": …, "me": […], "messages": [
///           {"uniqueIdentifier", "authors": […], "recipients": […], "primaryRecipients": […],
///            "date": ISO 8601 or null, "subject": … or null, "text": …}, …]}}
///     ← {"type": "summarized", "request": "e1", "summary": "…"}
///     ← {"type": "classified", "request": "e1", "isPriority": true | false}
///     → {"type": "stop"}
///
/// Messages are oldest first; the last is the one to enrich. The environment carries `REPLICA_MODE=enrich`.
/// The plugin may send `log` lines at any time. Anything else — exiting, no answer within `timeout`, a
/// line that is not the answer to the request asked — ends the program and fails the request: the item
/// stays waiting and is tried again later, by a program started afresh. What the program writes on
/// standard error is not read: it might echo the messages, and failures are stored and logged.
///
/// For example:
/// ```swift
/// var configuration = Store.Configuration()
/// configuration.enrichment.summarizer = ExecEnricher(command: ["/usr/local/bin/summarize-thread"])
/// ```
public struct ExecEnricher: Summarizer, PriorityClassifier {
    /// The program and its arguments.
    public var command: [String]
    /// The longest wait for an answer, in seconds (writing the request included); at most a day.
    public var timeout: TimeInterval
    /// The running program, shared by copies of this value.
    private let session = Session()

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
    /// - Throws: `ReplicaError` with code `invalidConfiguration` when the program cannot be started, fails,
    ///   does not answer within ``timeout``, or answers without a `summary` string.
    public func summarize(_ thread: MessageThread) async throws -> String {
        let answer = try await ask("summarize", answeredBy: "summarized", thread)
        guard let summary = answer["summary"]?.stringValue else {
            throw Self.failure(command, "its answer has no \"summary\" string")
        }
        return summary
    }

    /// Asks the program whether the last message of `thread` is a priority (a `classify` request).
    ///
    /// - Parameter thread: the conversation, its last message the one to classify.
    /// - Returns: the `isPriority` flag of the program's answer.
    /// - Throws: `ReplicaError` with code `invalidConfiguration` when the program cannot be started, fails,
    ///   does not answer within ``timeout``, or answers without an `isPriority` true or false.
    public func isPriority(_ thread: MessageThread) async throws -> Bool {
        let answer = try await ask("classify", answeredBy: "classified", thread)
        guard let flag = answer["isPriority"]?.boolValue else {
            throw Self.failure(command, "its answer has no \"isPriority\" true or false")
        }
        return flag
    }

    /// The request as one JSON object.
    static func request(_ kind: String, id: String, _ thread: MessageThread) -> JSON {
        .object([
            ("type", .string(kind)),
            ("request", .string(id)),
            (
                "thread",
                .object([
                    ("domain", .string(thread.domain.rawValue)),
                    ("me", .array(thread.me.map(JSON.string))),
                    (
                        "messages",
                        .array(
                            thread.messages.map { message in
                                .object([
                                    ("uniqueIdentifier", .string(message.identifier.rawValue)),
                                    ("authors", .array(message.authors.map(JSON.string))),
                                    ("recipients", .array(message.recipients.map(JSON.string))),
                                    ("primaryRecipients", .array(message.primaryRecipients.map(JSON.string))),
                                    ("date", message.date.map { .string(ISO8601.string(from: $0)) } ?? .null),
                                    ("subject", message.subject.map(JSON.string) ?? .null),
                                    ("text", .string(message.text)),
                                ])
                            })
                    ),
                ])
            ),
        ])
    }

    private func ask(_ kind: String, answeredBy answer: String, _ thread: MessageThread) async throws -> JSON {
        let (session, command, timeout) = (session, command, min(max(timeout, 0.001), 86_400))
        return try await Blocking.run {
            try session.exchange(kind, answeredBy: answer, thread, command: command, timeout: timeout)
        }
    }

    /// The program while it runs: started at the first request (and again after it ended, or when the
    /// command changed), ended by a failure or when the last copy of the enricher goes. One request at a
    /// time; each has `timeout` seconds in all, writing the request included.
    final class Session: Sendable {
        /// What a request reads and changes, one request at a time.
        private struct State {
            var plugin: PluginProcess?
            var command: [String] = []
            var requests = 0
        }

        private let state = Mutex(State())

        /// The program turned out to have ended while idle, before it read the request.
        private struct EndedWhileIdle: Error {}

        deinit {
            // Asked to stop off the thread that dropped the enricher, which must not wait for it.
            if let plugin = state.withLock({ $0.plugin }) { Thread.detachNewThread { plugin.stop(grace: 1) } }
        }

        func exchange(
            _ kind: String, answeredBy answer: String, _ thread: MessageThread, command: [String],
            timeout: TimeInterval
        ) throws -> JSON {
            try state.withLock { state in
                let deadline = Date().addingTimeInterval(timeout)
                if let running = state.plugin, running.hasEnded || state.command != command {
                    running.stop(grace: 1)
                    state.plugin = nil
                }
                // A program that ended while idle (its end not noticed yet) is started again once, at no
                // cost to the item.
                do {
                    return try Self.ask(
                        kind, answeredBy: answer, thread, command: command, timeout: timeout, deadline: deadline,
                        mayHaveEnded: state.plugin != nil, &state)
                } catch is EndedWhileIdle {
                    state.plugin = nil
                    return try Self.ask(
                        kind, answeredBy: answer, thread, command: command, timeout: timeout, deadline: deadline,
                        mayHaveEnded: false, &state)
                }
            }
        }

        /// One request to the running program (started first if none runs); with `mayHaveEnded`, a program
        /// found ended before it answered throws ``EndedWhileIdle`` instead of failing the request.
        private static func ask(
            _ kind: String, answeredBy answer: String, _ thread: MessageThread, command: [String],
            timeout: TimeInterval, deadline: Date, mayHaveEnded: Bool, _ state: inout State
        ) throws -> JSON {
            // What the program wrote on standard error is not quoted: it may echo the messages it was given,
            // and failures are stored and logged.
            let plugin = try state.plugin ?? start(command, &state)
            func failure(_ problem: String) -> ReplicaError {
                plugin.kill()
                state.plugin = nil
                return ExecEnricher.failure(command, problem)
            }
            state.requests += 1
            let id = "e\(state.requests)"
            switch plugin.send(
                ExecEnricher.request(kind, id: id, thread), within: max(deadline.timeIntervalSinceNow, 0.001))
            {
            case .sent: break
            case .closed where mayHaveEnded: throw EndedWhileIdle()
            case .closed: throw failure("it no longer reads its standard input")
            case .timedOut: throw failure("it did not read the request within \(Int(timeout)) seconds")
            }
            while true {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { throw failure("it did not answer within \(Int(timeout)) seconds") }
                switch plugin.next(timeout: left) {
                case .line(let number, let text):
                    guard let message = try? JSON.parse(text), let type = message["type"]?.stringValue else {
                        throw failure("its line \(number) is not a JSON object with a \"type\"")
                    }
                    if type == "log" || type == "pong" { continue }
                    guard type == answer, message["request"]?.stringValue == id else {
                        throw failure("it sent \"\(type)\" where the answer to request \(id) was due (\"\(answer)\")")
                    }
                    return message
                case .end where mayHaveEnded: throw EndedWhileIdle()
                case .end(let status): throw failure("it \(status)")
                case .timeout: throw failure("it did not answer within \(Int(timeout)) seconds")
                case .tooLong(let number):
                    throw failure("its line \(number) is longer than \(PluginProcess.maximumLineLength) bytes")
                }
            }
        }

        private static func start(_ command: [String], _ state: inout State) throws -> PluginProcess {
            let started = try PluginProcess(command: command, environment: ["REPLICA_MODE": "enrich"])
            started.send(.object([("type", "start"), ("mode", "enrich")]))
            state.plugin = started
            state.command = command
            return started
        }
    }

    /// A failure of `command`: its name and the problem, never what it was given or wrote.
    static func failure(_ command: [String], _ problem: String) -> ReplicaError {
        ReplicaError(.invalidConfiguration, "the enrichment program \(command.first ?? "") failed: \(problem)")
    }

}
