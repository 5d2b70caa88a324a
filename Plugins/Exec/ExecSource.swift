import Foundation
public import Replica

/// Any executable that speaks replica's line-delimited JSON protocol on its standard input and output is
/// a source (`Plugins/README.md` describes the protocol).
///
/// Upserts and deletions a plugin sends are held until it sends `commit` with a checkpoint; then they
/// and the checkpoint are written in one transaction. A plugin that exits, stops answering, or writes
/// something that is not the protocol is ended, its uncommitted batch dropped, the failure reported, and
/// (while watching) it is started again after a back-off, from its last committed checkpoint. It never
/// takes the watcher down.
///
/// Settings: `command` (required: the executable and its arguments), `silenceSeconds` (how long a
/// syncing plugin may say nothing, how long a ping may go unanswered, and the silence that ends a watched
/// plugin's catch-up if it has not said `idle`; default 30).
public final class ExecSource: Source {
    /// The source as the store holds it: its name, account, index and settings (the command among them).
    public let definition: SourceDefinition
    let command: [String]
    let silence: Double
    let backoff: Backoff
    let catchUpLimit: Duration

    /// Why a plugin session ended badly.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the plugin command and its settings from `definition`.
    ///
    /// - Parameters:
    ///   - definition: the source, its settings among it.
    ///   - backoff: spaces restarts of a watched plugin that ended.
    ///   - catchUpLimit: the longest a watched plugin's catch-up is written as a load: one that never
    ///     says `idle` and is never silent (a busy feed) does not hold its account's ranking lists back
    ///     for as long as it runs.
    /// - Throws: `ReplicaError` with code `invalidConfiguration` when the settings hold no command.
    public init(
        _ definition: SourceDefinition, backoff: Backoff = Backoff(initial: 1, maximum: 60),
        catchUpLimit: Duration = .seconds(600)
    ) throws {
        self.definition = definition
        guard let command = definition.settings["command"]?.arrayValue?.compactMap(\.stringValue), !command.isEmpty
        else {
            throw ReplicaError(
                .invalidConfiguration, "source '\(definition.name)' needs a 'command' (the plugin and its arguments)")
        }
        self.command = command
        silence = definition.settings["silenceSeconds"]?.doubleValue ?? 30
        self.backoff = backoff
        self.catchUpLimit = catchUpLimit
    }

    private func start(_ mode: String, checkpoint: String?) throws -> PluginProcess {
        let plugin = try PluginProcess(
            command: command,
            environment: [
                "REPLICA_SOURCE": definition.name, "REPLICA_ACCOUNT": definition.account.rawValue, "REPLICA_MODE": mode,
            ])
        plugin.send(
            .object(omittingNil: [
                ("type", "start"), ("mode", .string(mode)), ("source", .string(definition.name)),
                ("account", .string(definition.account.rawValue)), ("checkpoint", checkpoint.map(JSON.string) ?? .null),
            ]))
        return plugin
    }

    // MARK: Sync and watch

    /// Starts the plugin in `sync` mode from the last checkpoint, commits each batch it sends, and stops it
    /// when it says it is idle.
    public func sync(_ context: SourceContext) async throws {
        await context.report(.syncing)
        do {
            try await session("sync", context)
            await context.report(.idle)
        } catch let failure as Failure {
            await context.report(.failed, detail: failure.description)
            await context.report(error: failure.description)
            throw ReplicaError(.storage, "plugin source '\(definition.name)': \(failure.description)")
        }
    }

    /// Runs the plugin in `watch` mode until cancelled, restarting it with back-off when it ends.
    public func watch(_ context: SourceContext) async throws {
        var failures = 0
        while !Task.isCancelled {
            let started = Date()
            do {
                await context.report(
                    .watching,
                    detail: failures == 0 ? nil : "restarted after \(failures) failure\(failures == 1 ? "" : "s")")
                try await session("watch", context)
                return
            } catch let failure as Failure {
                failures = Date().timeIntervalSince(started) > 60 ? 1 : failures + 1
                let delay = backoff.delay(afterFailures: failures)
                await context.report(
                    .failed, detail: "\(failure.description); restarting in \(Int(delay.rounded(.up))) s")
                await context.report(error: failure.description)
                try? await Task.sleep(for: .seconds(delay))
            }
        }
        await context.report(.stopped)
    }

    /// Runs the plugin until it is caught up (`sync`) or until cancelled (`watch`).
    ///
    /// A watched plugin's catch-up is written as a load (``SourceContext/load(isolation:_:)``), as `sync`
    /// writes it: what it sends before its first `idle` (the changes since its checkpoint, its whole
    /// first index) leaves the ranking lists to be built once, after it. The catch-up also ends at the
    /// plugin's first silence long enough to be pinged, and after ``catchUpLimit``: what follows is
    /// written as any change is, only more slowly.
    private func session(_ mode: String, _ context: SourceContext) async throws {
        let checkpoint = try await context.checkpoint()
        let plugin = try start(mode, checkpoint: checkpoint)
        var batch: [SourceEvent] = []
        var pingSent = false
        var pings = 0
        /// Reads and acts on the plugin's messages until cancelled, or (`untilCaughtUp`, while watching)
        /// until it is caught up: it says `idle`, is pinged after a silence, or has caught up for
        /// ``catchUpLimit``.
        func follow(untilCaughtUp: Bool) async throws {
            let caughtUpBy = ContinuousClock.now + catchUpLimit
            while !Task.isCancelled {
                if untilCaughtUp && ContinuousClock.now >= caughtUpBy { return }
                let silence = silence
                let message = try await Blocking.run { plugin.next(timeout: silence) }
                switch message {
                case .end(let status):
                    throw Failure(
                        description: "the plugin \(status)"
                            + (batch.isEmpty ? "" : "; its uncommitted batch of \(batch.count) changes was dropped")
                            + (plugin.lastErrors.isEmpty ? "" : " (it said: \(plugin.lastErrors))"))
                case .tooLong(let number):
                    throw Failure(
                        description:
                            "line \(number) of its output is longer than \(PluginProcess.maximumLineLength >> 20) MiB, the most a protocol line may hold; the plugin was stopped"
                            + (batch.isEmpty
                                ? "" : " and its uncommitted batch of \(batch.count) changes was dropped"))
                case .timeout:
                    if mode == "sync" || pingSent {
                        throw Failure(description: "the plugin said nothing for \(Int(silence)) s and was stopped")
                    }
                    pings += 1
                    plugin.send(.object([("type", "ping"), ("id", .number(Double(pings)))]))
                    pingSent = true
                    if untilCaughtUp { return }
                case .line(let number, let text):
                    let message: PluginMessage
                    do throws(PluginMessage.Problem) {
                        message = try PluginMessage.read(text)
                    } catch .notAMessage {
                        throw Failure(description: "line \(number) of its output is not a protocol message")
                    } catch .unknownType(let type) {
                        throw Failure(description: "line \(number) has an unknown message type '\(type)'")
                    }
                    switch message {
                    case .upsert(let item, let version):
                        batch.append(upsert(item, version: version))
                    case .badUpsert(let error):
                        await context.report(error: "line \(number): \(error.message); the item was skipped")
                    case .delete(let key):
                        batch.append(.delete(definition.identifier(key), entryKey: key))
                    case .badDelete:
                        await context.report(error: "line \(number): a delete needs a uniqueIdentifier; skipped")
                        continue
                    case .commit(let checkpoint):
                        try await context.commit(SourceBatch(events: batch, checkpoint: checkpoint))
                        batch.removeAll()
                    case .idle:
                        if mode == "sync" {
                            if !batch.isEmpty {
                                await context.report(
                                    error:
                                        "the plugin went idle with \(batch.count) uncommitted changes; they were dropped"
                                )
                                await context.reportPending(0)
                            }
                            return
                        }
                        if untilCaughtUp { return }
                    case .pong:
                        pingSent = false
                    case .log(let level, let text):
                        if level == "error", let text {
                            await context.report(error: "the plugin reported: \(text)")
                        }
                    case .hydrated:
                        break  // an answer nobody asked for in this mode
                    }
                    await context.reportPending(batch.count)
                }
            }
        }
        do {
            try await withTaskCancellationHandler {
                if mode == "watch" { try await context.load { try await follow(untilCaughtUp: true) } }
                try await follow(untilCaughtUp: false)
            } onCancel: {
                plugin.send(.object([("type", "stop")]))
            }
        } catch {
            plugin.kill()
            // The uncommitted batch is dropped: nothing waits any more (the plugin sends it again).
            await context.reportPending(0)
            throw error
        }
        try await Blocking.run { plugin.stop() }
    }

    private func upsert(_ item: SearchableItem, version: String?) -> SourceEvent {
        var item = item
        let key = item.uniqueIdentifier.rawValue
        item.uniqueIdentifier = definition.identifier(key)
        if item.domainIdentifier == nil { item.domainIdentifier = definition.domain }
        if item.expirationDate == nil { item.expirationDate = .distantFuture }
        return .upsert(item, entry: SourceEntry(key: key, stamp: version ?? "-"))
    }

    // MARK: Hydration

    /// Starts the plugin for the purpose, asks it about the items, and waits at most `silenceSeconds`.
    public func answer(
        _ identifiers: [ItemIdentifier], includingContent: Bool,
        _ context: SourceContext
    ) async throws -> [ItemIdentifier: SourceAnswer] {
        let keys = identifiers.compactMap { identifier in definition.key(of: identifier).map { (identifier, $0) } }
        guard !keys.isEmpty else { return [:] }
        let plugin = try start("hydrate", checkpoint: try await context.checkpoint())
        defer { plugin.kill() }
        plugin.send(
            .object([("type", "hydrate"), ("request", "h1"), ("identifiers", .array(keys.map { .string($0.1) }))]))
        let silence = silence
        var answers: [ItemIdentifier: SourceAnswer] = [:]
        // A caller that stops waiting (hydration's timeout cancels it) ends the plugin at once, which
        // ends the wait for its next line; its input is closed by the deferred kill, after any write.
        return try await withTaskCancellationHandler {
            while true {
                switch try await Blocking.run({ plugin.next(timeout: silence) }) {
                case .timeout, .end, .tooLong:
                    return answers
                case .line(_, let text):
                    guard case .hydrated(let items, let gone)? = try? PluginMessage.read(text) else { continue }
                    for (item, version) in items {
                        var item = item
                        item.uniqueIdentifier = definition.identifier(item.uniqueIdentifier.rawValue)
                        if item.domainIdentifier == nil { item.domainIdentifier = definition.domain }
                        answers[item.uniqueIdentifier] = .current(item, version: version)
                    }
                    for (key, reason) in gone {
                        answers[definition.identifier(key)] = .gone(reason: reason ?? "the plugin says it is gone")
                    }
                    plugin.send(.object([("type", "stop")]))
                    return answers
                }
            }
        } onCancel: {
            plugin.kill(closingInput: false)
        }
    }
}
