import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs services side by side until asked to stop, then stops them one at a time in the reverse of the
/// order they were given, within a bounded time.
///
/// List a service after the services it depends on: it is started after them (not waiting for them to be
/// ready) and stops before them. `replica watch` lists the sweep, embedding, enrichment, the record
/// stores' projection and the sources, so the sources stop first (each commits what it has in flight)
/// and the projection's last catch-up applies the record stores' last changes.
///
/// The group is asked to stop by the first of: one of `signals` (SIGTERM, SIGINT), a call to
/// ``triggerGracefulShutdown()``, the cancellation of the task running ``run()``, or a service that
/// ends on its own. It then cancels the last service, waits until that one returns, cancels the one before
/// it, and so on. The shutdown is bounded:
/// - When `maximumShutdownTime` passes before every service has returned, the rest are cancelled at
///   once and ``run()`` returns without waiting for them, throwing ``ServiceGroupError`` that names the
///   service that would not stop.
/// - A second request (a second signal, a second call) cancels every service still running at once and
///   returns without waiting for them, as a person pressing Ctrl-C twice expects.
///
/// Each service runs in a task of its own rather than in a task group, because a task group cannot
/// return while one of its children runs: a service blocked in a system call that ignores cancellation
/// would keep the group, and the process, from ending.
///
/// For example:
/// ```swift
/// let engine = ProjectionEngine(store: store, projections: ProjectionSet(indexName: "Notes"))
/// let services: [any Service] = [SweepService(store: store), ProjectionService(engine: engine)]
/// let group = ServiceGroup(services: services, signals: [SIGTERM, SIGINT]) { event in print(event) }
/// try await group.run()   // until SIGTERM: the projection stops first, then the sweep
/// ```
public final class ServiceGroup: Sendable {
    /// What happens to the group and its services, in order, for a host to log.
    public enum Event: Sendable, Equatable {
        /// Every service was started.
        case started
        /// The group was asked to stop, and why.
        case stopping(ShutdownReason)
        /// A service was cancelled and is being waited for.
        case stoppingService(String)
        /// A service returned.
        case stopped(String)
        /// A service threw; the message is its error's.
        case failed(String, message: String)
        /// A service was cancelled and not waited for: time ran out, or a second request came.
        case abandoned(String)
        /// The group returned.
        case finished
    }

    /// Why a group stops.
    public enum ShutdownReason: Sendable, Equatable {
        /// A signal arrived (SIGTERM, SIGINT).
        case signal(Int32)
        /// ``ServiceGroup/triggerGracefulShutdown()`` was called.
        case requested
        /// The task running ``ServiceGroup/run()`` was cancelled.
        case cancelled
        /// A service returned or threw before the group was asked to stop.
        case serviceEnded(String)
    }

    /// The services, in the order they start; they stop in the reverse order.
    public let services: [any Service]
    /// The signals that ask the group to stop while it runs.
    public let signals: [Int32]
    /// How long a graceful shutdown may take, from the request to the last service's return.
    public let maximumShutdownTime: Duration
    private let clock: any Clock<Duration>
    private let onEvent: @Sendable (Event) -> Void
    private let inbox = Mutex<AsyncStream<Message>.Continuation?>(nil)
    private let hasRun = Mutex(false)

    /// Creates a group; nothing runs until ``run()``.
    ///
    /// - Parameters:
    ///   - services: the services, each listed after those it depends on.
    ///   - signals: signals that ask the group to stop while ``run()`` runs (they are ignored by the
    ///     process meanwhile, and set back as they were when it returns); none by default.
    ///   - maximumShutdownTime: how long a graceful shutdown may take: 30 seconds by default.
    ///   - clock: the clock that times the shutdown; tests pass one they move by hand.
    ///   - onEvent: hears what happens, in order, from whichever thread the group is on.
    public init(
        services: [any Service], signals: [Int32] = [], maximumShutdownTime: Duration = .seconds(30),
        clock: any Clock<Duration> = ContinuousClock(), onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) {
        self.services = services
        self.signals = signals
        self.maximumShutdownTime = maximumShutdownTime
        self.clock = clock
        self.onEvent = onEvent
    }

    /// Asks the group to stop: gracefully the first time, at once the second. Does nothing before
    /// ``run()`` has started or after it has returned.
    public func triggerGracefulShutdown() {
        _ = inbox.withLock { $0?.yield(.requested) }
    }

    /// Starts every service and returns once the group has stopped (see ``ServiceGroup``).
    ///
    /// - Throws: ``ServiceGroupError`` when a service threw or returned before the group was asked to
    ///   stop, or did not stop within `maximumShutdownTime`.
    /// - Precondition: `run()` is called once.
    public func run() async throws {
        let ranBefore = hasRun.withLock { ran in
            defer { ran = true }
            return ran
        }
        precondition(!ranBefore, "a ServiceGroup runs once")
        let (messages, continuation) = AsyncStream<Message>.makeStream()
        inbox.withLock { $0 = continuation }
        let signalWatch = SignalWatch(signals) { continuation.yield(.signal($0)) }
        defer {
            inbox.withLock { $0 = nil }
            signalWatch.stop()
            continuation.finish()
        }

        let tasks = services.enumerated().map { index, service in
            Task {
                let result = await Result { try await service.run() }
                continuation.yield(.ended(index, result))
            }
        }
        onEvent(.started)
        // The loop runs in a task of its own: a cancelled task's stream ends at once, and a cancellation
        // must instead reach the loop as a request to stop.
        let loop = Task { await supervise(Shutdown(services: services, tasks: tasks), messages, continuation) }
        let shutdown = await withTaskCancellationHandler {
            await loop.value
        } onCancel: {
            continuation.yield(.cancelled)
        }
        onEvent(.finished)
        if let error = shutdown.error(within: maximumShutdownTime) { throw error }
    }

    /// Waits for the first reason to stop, then stops the services one at a time, the last first.
    private func supervise(
        _ shutdown: Shutdown, _ messages: AsyncStream<Message>,
        _ continuation: AsyncStream<Message>.Continuation
    ) async -> Shutdown {
        var shutdown = shutdown
        var iterator = messages.makeAsyncIterator()
        var reason = ShutdownReason.cancelled
        waiting: while let message = await iterator.next() {
            switch message {
            case .ended(let index, let result):
                shutdown.ended(index, result, early: true, onEvent)
                reason = .serviceEnded(services[index].name)
                break waiting
            case .signal(let number):
                reason = .signal(number)
                break waiting
            case .requested:
                reason = .requested
                break waiting
            case .cancelled:
                reason = .cancelled
                break waiting
            case .deadline: continue
            }
        }
        onEvent(.stopping(reason))
        let deadline = Task { [clock, maximumShutdownTime] in
            guard (try? await clock.sleep(for: maximumShutdownTime)) != nil else { return }
            continuation.yield(.deadline)
        }
        defer { deadline.cancel() }
        for index in services.indices.reversed() where shutdown.isRunning(index) {
            onEvent(.stoppingService(services[index].name))
            shutdown.tasks[index].cancel()
            while shutdown.isRunning(index), let message = await iterator.next() {
                switch message {
                case .ended(let ended, let result):
                    shutdown.ended(ended, result, early: false, onEvent)
                case .signal, .requested, .cancelled:
                    shutdown.abandonAll(onEvent)
                case .deadline:
                    shutdown.stuck = services[index].name
                    shutdown.abandonAll(onEvent)
                }
            }
        }
        return shutdown
    }

    /// What reaches the group's loop.
    private enum Message: Sendable {
        case ended(Int, Result<Void, any Error>)
        case signal(Int32)
        case requested
        case cancelled
        case deadline
    }

    /// The services still running and what went wrong, as the loop learns it.
    private struct Shutdown: Sendable {
        let services: [any Service]
        let tasks: [Task<Void, Never>]
        private var running: Set<Int>
        private var failures: [ServiceGroupError.Failure] = []
        private var abandoned: [String] = []
        var stuck: String?

        init(services: [any Service], tasks: [Task<Void, Never>]) {
            self.services = services
            self.tasks = tasks
            running = Set(services.indices)
        }

        func isRunning(_ index: Int) -> Bool { running.contains(index) }

        mutating func ended(_ index: Int, _ result: Result<Void, any Error>, early: Bool, _ onEvent: (Event) -> Void) {
            running.remove(index)
            let name = services[index].name
            switch result {
            case .success where early:
                failures.append(.init(service: name, error: ServiceGroupError.EndedEarly(service: name)))
                onEvent(.failed(name, message: "returned before the group was asked to stop"))
            case .success:
                onEvent(.stopped(name))
            case .failure(let error):
                failures.append(.init(service: name, error: error))
                onEvent(.failed(name, message: ReplicaError.message(of: error)))
            }
        }

        /// Cancels every service still running, last first, without waiting for any.
        mutating func abandonAll(_ onEvent: (Event) -> Void) {
            for index in services.indices.reversed() where running.contains(index) {
                tasks[index].cancel()
                abandoned.append(services[index].name)
                onEvent(.abandoned(services[index].name))
            }
            running.removeAll()
        }

        func error(within time: Duration) -> ServiceGroupError? {
            guard !failures.isEmpty || stuck != nil else { return nil }
            return ServiceGroupError(failures: failures, stuck: stuck, abandoned: abandoned, maximumShutdownTime: time)
        }
    }
}

/// Why a ``ServiceGroup`` did not stop cleanly.
public struct ServiceGroupError: Error, Sendable, CustomStringConvertible {
    /// A service that threw, or returned before the group was asked to stop.
    public struct Failure: Sendable {
        /// The service's name.
        public var service: String
        /// What it threw (``EndedEarly`` when it returned).
        public var error: any Error
    }

    /// The error of a service that returned before the group was asked to stop.
    public struct EndedEarly: Error, Sendable, Equatable {
        /// The service's name.
        public var service: String
    }

    /// The services that threw or ended early, in the order they did.
    public var failures: [Failure]
    /// The service the shutdown was waiting for when `maximumShutdownTime` passed, if it did.
    public var stuck: String?
    /// The services cancelled and not waited for, the last first.
    public var abandoned: [String]
    /// The group's bound on a graceful shutdown.
    public var maximumShutdownTime: Duration

    public var description: String {
        var parts = failures.map { failure in
            failure.error is EndedEarly
                ? "service '\(failure.service)' returned before the group was asked to stop"
                : "service '\(failure.service)' failed: \(ReplicaError.message(of: failure.error))"
        }
        if let stuck {
            parts.append(
                "service '\(stuck)' did not stop within \(maximumShutdownTime.formatted); "
                    + "\(abandoned.map { "'\($0)'" }.joined(separator: ", ")) cancelled without waiting")
        }
        return parts.joined(separator: "; ")
    }
}

extension Duration {
    /// "30 s", "1.5 s".
    fileprivate var formatted: String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}

/// The group's signals, delivered through Dispatch sources while the group runs; each is ignored by the
/// process meanwhile (so that it does not end it), and set back as it was by `stop()`.
private final class SignalWatch {
    private var sources: [any DispatchSourceSignal] = []
    private var previous: [(number: Int32, action: sigaction)] = []

    init(_ signals: [Int32], onSignal: @escaping @Sendable (Int32) -> Void) {
        for number in Set(signals) {
            var ignore = sigaction()
            ignore.__sigaction_handler.sa_handler = SIG_IGN
            var old = sigaction()
            sigaction(number, &ignore, &old)
            previous.append((number, old))
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { onSignal(number) }
            source.resume()
            sources.append(source)
        }
    }

    func stop() {
        for source in sources { source.cancel() }
        for (number, action) in previous {
            var action = action
            sigaction(number, &action, nil)
        }
        sources = []
        previous = []
    }
}
