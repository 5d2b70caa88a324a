import Foundation
import ReplicaCore
package import ReplicaPostgres
import Synchronization

/// Reads served by a streaming-replication standby of the store's database, without losing this
/// process's own writes and never from a standby that has stopped keeping up.
///
/// Every transaction this process commits on the primary (but those begun read-only, which wrote
/// nothing) leaves its write-ahead log position here (``noteCommit(_:)``, from the primary pools'
/// ``PostgresConnection/Options/committed``). A read on the standby first waits, up to ``replayWait``,
/// until the standby has replayed past the latest of them (`pg_last_wal_replay_lsn()`), and only then
/// takes its snapshot; past the wait, the read goes to the primary (``read(_:)`` returns `nil`).
///
/// Writes by other processes are seen once the standby replays them, so the standby's own state is
/// checked too, on the standby itself, and the answer kept for ``checkEvery``
/// (``Condition``): a standby whose replay is paused, that has received log it has not replayed for
/// longer than ``maximumLag``, or that receives no log (no WAL receiver), is stale, and reads go to the
/// primary until it catches up (``check(on:)`` says how behind is measured). A standby
/// that cannot be reached, refuses the sign-in, or is not a standby of this database (a server not in
/// recovery, or one whose system identifier is not the primary's) is unavailable: reads go to the
/// primary, and it is tried again after ``retryAfter``. Each reason is said once (`say`), never with
/// the URL.
package final class StandbyReads: Sendable {
    /// The standby's connections.
    package let pool: PostgresPool
    /// How long a read waits for the standby to replay this process's last commit before it goes to the primary.
    package let replayWait: Duration
    /// How long the standby may hold log it has received and not replayed before its reads go to the primary.
    package let maximumLag: Duration
    /// How long an answer about the standby's state is used before the standby is asked again.
    package let checkEvery: Duration
    /// How long reads go to the primary after the standby could not be used.
    package let retryAfter: Duration
    /// The primary's system identifier (`pg_control_system()`), which its standbys share; `nil` skips the check.
    private let primarySystem: String?
    private let say: @Sendable (String) -> Void
    private let state = Mutex(State())
    private let clock = ContinuousClock()

    /// What the standby was found to be, the last time it was asked.
    package enum Condition: Sendable, Equatable {
        /// It replays the primary's log, `lag` behind (zero when it has replayed all it received).
        case serving(lag: Duration)
        /// Its reads go to the primary: its replay is paused, or it is more than ``maximumLag`` behind.
        case stale(reason: String, lag: Duration?)
        /// Its reads go to the primary: it could not be reached or used (`reason` says why).
        case unavailable(reason: String)
    }

    private struct State {
        /// The latest commit position this process saw on the primary.
        var written = WALPosition(0)
        /// The standby's condition and when it was found.
        var condition: (Condition, ContinuousClock.Instant)?
        /// Log the standby had received and not replayed, as first seen, and when: it is behind by at
        /// least the time since, until it has replayed that far.
        var pending: (received: WALPosition, since: ContinuousClock.Instant)?
        /// When the standby was first seen receiving no log (no WAL receiver).
        var notReceivingSince: ContinuousClock.Instant?
        /// The reasons said so far, each once.
        var said: Set<String> = []
        var statistics = ReadRouting()
    }

    /// Where reads went, and how long those that followed a write waited for the standby.
    package struct ReadRouting: Sendable {
        /// Reads the standby served.
        package var standby = 0
        /// Reads that went to the primary because the standby had not replayed this process's last
        /// write within the wait.
        package var primaryAfterWaiting = 0
        /// Reads that went to the primary because the standby was stale (paused, or behind past the maximum lag).
        package var primaryStandbyStale = 0
        /// Reads that went to the primary because the standby could not be reached or used, or its read failed.
        package var primaryStandbyUnavailable = 0
        /// How long each standby read waited for the replay of this process's last write, the latest
        /// 10,000 (reads with no write of this process before them do not wait and are not counted).
        package var replayWaits: [Duration] = []
    }

    /// - Parameters:
    ///   - pool: connections to the standby.
    ///   - replayWait: the longest a read waits for the standby to catch up with this process's writes.
    ///   - maximumLag: how far behind the standby may be before its reads go to the primary.
    ///   - checkEvery: how long the standby's state, once asked, is taken as it was.
    ///   - retryAfter: how long reads pass the standby over after it could not be used.
    ///   - primarySystem: the primary's system identifier, which a standby of it shares.
    ///   - say: told each reason the standby is not used, once.
    package init(
        pool: PostgresPool, replayWait: Duration, maximumLag: Duration = .seconds(1),
        checkEvery: Duration = .milliseconds(250),
        retryAfter: Duration = .seconds(1), primarySystem: String? = nil,
        say: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.pool = pool
        self.replayWait = replayWait
        self.maximumLag = maximumLag
        self.checkEvery = checkEvery
        self.retryAfter = retryAfter
        self.primarySystem = primarySystem
        self.say = say
    }

    /// Records a commit this process made on the primary: reads after it wait for the standby to replay it.
    package func noteCommit(_ position: WALPosition) {
        state.withLock { $0.written = max($0.written, position) }
    }

    /// Where reads went so far.
    package var routing: ReadRouting { state.withLock { $0.statistics } }

    /// The standby's condition, asked of it now (not the kept answer); the answer is kept for the reads after.
    @available(*, noasync, message: "it asks the standby; in async code run it in Blocking.run")
    package func checkNow() -> Condition {
        do {
            return try pool.withConnection { connection in try check(on: connection) }
        } catch {
            return unavailable(error)
        }
    }

    /// Runs `body` on a standby connection that has replayed this process's last commit, or returns
    /// `nil` when the read must go to the primary instead (the standby is stale or unavailable, behind
    /// this process's writes past ``replayWait``, or `body` failed there: the primary's answer is the
    /// one that counts).
    @available(*, noasync, message: "it waits for the standby; in async code run it in Blocking.run")
    package func read<T>(_ body: (PostgresConnection) throws -> T) -> T? {
        let (needed, kept) = state.withLock { state -> (WALPosition, Condition?) in
            (
                state.written,
                state.condition.flatMap { condition, at in clock.now - at < holding(condition) ? condition : nil }
            )
        }
        if let kept, !count(kept) { return nil }
        var checked = false
        do {
            return try pool.withConnection { connection -> T? in
                if kept == nil, !count(try check(on: connection)) { return nil }
                checked = true
                guard let waited = try waitForReplay(of: needed, on: connection) else {
                    count { $0.primaryAfterWaiting += 1 }
                    return nil
                }
                let value = try body(connection)
                count { statistics in
                    statistics.standby += 1
                    if needed.value > 0 {
                        if statistics.replayWaits.count >= 10_000 { statistics.replayWaits.removeFirst(5_000) }
                        statistics.replayWaits.append(waited)
                    }
                }
                return value
            }
        } catch {
            // A failure before the standby was found usable (connecting, signing in, asking its state), or
            // one that lost the connection, passes the standby over; one in the read itself is the
            // read's alone.
            let lost =
                (error as? PostgresError).map {
                    [.connectionRefused, .serverUnreachable, .connectionLost].contains($0.code)
                } ?? false
            if !checked || lost { _ = unavailable(error) }
            count { $0.primaryStandbyUnavailable += 1 }
            return nil
        }
    }

    /// How long an answer is kept: an unavailable standby is passed over for ``retryAfter``.
    private func holding(_ condition: Condition) -> Duration {
        if case .unavailable = condition { return retryAfter }
        return checkEvery
    }

    /// Counts a read that the condition sends to the primary; whether the standby may serve it.
    private func count(_ condition: Condition) -> Bool {
        switch condition {
        case .serving: return true
        case .stale: count { $0.primaryStandbyStale += 1 }
        case .unavailable: count { $0.primaryStandbyUnavailable += 1 }
        }
        return false
    }

    /// Asks the standby what it is and how far behind, keeps the answer, and says a new reason to pass it over.
    ///
    /// Behind is measured on the standby, by log position: log it has received and not replayed, first
    /// seen a while ago and still not replayed, is that while behind. Log just received (this process's
    /// own write, say) is given up to ``replayWait`` to be replayed before it counts; past that, a standby
    /// whose last replayed transaction was committed more than ``maximumLag`` ago is behind at once (a
    /// process that asks once, such as a command, cannot watch it for a second). A standby receiving no
    /// log (its WAL receiver gone: cut off from the primary) cannot say how far behind it is, and counts
    /// as stale once that has lasted ``maximumLag``, or at once when its last replayed transaction is older.
    private func check(on connection: PostgresConnection) throws -> Condition {
        let row = try connection.execute(
            """
            SELECT pg_is_in_recovery(),
                   (SELECT system_identifier FROM pg_control_system())::text,
                   CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() END,
                   pg_last_wal_receive_lsn()::text,
                   pg_last_wal_replay_lsn()::text,
                   (SELECT pid FROM pg_stat_wal_receiver) IS NOT NULL,
                   extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8
            """)
        let paused = row.string(0, 2) == "t"
        guard row.string(0, 0) == "t" else {
            return keep(
                .unavailable(
                    reason: "the read database is not a standby: it is not replaying a primary's log (the primary "
                        + "itself, or a standby that was promoted); name a streaming-replication standby of the database"
                ))
        }
        if let primarySystem, let system = row.string(0, 1), system != primarySystem {
            return keep(
                .unavailable(
                    reason: "the read database is a standby of another database cluster (its system identifier is not "
                        + "the database's); name a standby of the database"))
        }
        // Since its last replayed transaction's commit; unknown before it has replayed one.
        let sinceLastReplayed = row.string(0, 6).flatMap(Double.init).map {
            Duration.milliseconds(Int64(max($0, 0) * 1000))
        }
        let now = clock.now
        let receiving = row.string(0, 5) == "t"
        let notReceivingFor: Duration? = state.withLock { state in
            if receiving {
                state.notReceivingSince = nil
            } else if state.notReceivingSince == nil {
                state.notReceivingSince = now
            }
            return state.notReceivingSince.map { now - $0 }
        }
        var lag = Duration.zero
        if let received = row.string(0, 3).flatMap(WALPosition.init(text:)),
            let replayed = row.string(0, 4).flatMap(WALPosition.init(text:)), received > replayed
        {
            let since = state.withLock { state -> ContinuousClock.Instant in
                if let pending = state.pending, pending.received > replayed { return pending.since }
                state.pending = (received, now)
                return now
            }
            lag = now - since
            if lag <= maximumLag, !paused {
                // Just received: replayed within the wait, it is not behind.
                if try waitForReplay(of: received, on: connection) != nil {
                    state.withLock { $0.pending = nil }
                    lag = .zero
                } else if let sinceLastReplayed, sinceLastReplayed > maximumLag {
                    lag = sinceLastReplayed
                }
            }
        } else {
            state.withLock { $0.pending = nil }
        }
        if paused {
            return keep(
                .stale(
                    reason: "the standby's replay is paused (pg_wal_replay_pause); reads go to the database until "
                        + "pg_wal_replay_resume()", lag: lag), sayingOnceAs: "paused")
        }
        if let notReceivingFor, notReceivingFor > maximumLag || (sinceLastReplayed ?? .seconds(Int64.max)) > maximumLag
        {
            return keep(
                .stale(
                    reason:
                        "the standby is receiving no log from the database (its WAL receiver is not running: cut off "
                        + "from the primary?), so it cannot tell how far behind it is; reads go to the database until it receives again",
                    lag: nil), sayingOnceAs: "not receiving")
        }
        if lag > maximumLag {
            return keep(
                .stale(
                    reason:
                        "the standby is \(Self.describe(lag)) behind, past its maximum lag of \(Self.describe(maximumLag)); "
                        + "reads go to the database until it catches up", lag: lag), sayingOnceAs: "behind")
        }
        return keep(.serving(lag: lag))
    }

    /// Keeps an unavailable standby's condition, from the error that made it so.
    private func unavailable(_ error: any Error) -> Condition {
        keep(
            .unavailable(
                reason:
                    "the read database cannot be used (\(ReplicaError.message(of: error))); reads go to the database"))
    }

    /// Keeps the condition for the reads after, and says why the standby is passed over the first time
    /// that kind of reason (`key`; an unavailable standby's reason is its own key) comes up.
    @discardableResult
    private func keep(_ condition: Condition, sayingOnceAs key: String? = nil) -> Condition {
        let why: String
        switch condition {
        case .serving: why = ""
        case .stale(let reason, _), .unavailable(let reason): why = reason
        }
        let sayIt = state.withLock { state -> Bool in
            state.condition = (condition, clock.now)
            return !why.isEmpty && state.said.insert(key ?? why).inserted
        }
        if sayIt { say(why) }
        return condition
    }

    /// A duration in seconds, with a tenth.
    private static func describe(_ duration: Duration) -> String { String(format: "%.1f s", duration.seconds) }

    /// Waits until the standby has replayed `position`, polling its replay position; how long that took,
    /// or `nil` past ``replayWait``. A server that is not in recovery (the primary itself) has nothing
    /// to replay.
    private func waitForReplay(of position: WALPosition, on connection: PostgresConnection) throws -> Duration? {
        let start = clock.now
        guard position.value > 0 else { return .zero }
        var pause = Duration.microseconds(200)
        while true {
            let replayed = try connection.execute("SELECT pg_last_wal_replay_lsn()::text").string(0, 0)
            guard let replayed else { return clock.now - start }
            if let replayed = WALPosition(text: replayed), replayed >= position { return clock.now - start }
            let waited = clock.now - start
            guard waited < replayWait else { return nil }
            Thread.sleep(forTimeInterval: min(pause, replayWait - waited).seconds)
            pause = min(pause * 2, .milliseconds(5))
        }
    }

    private func count(_ change: (inout ReadRouting) -> Void) {
        state.withLock { change(&$0.statistics) }
    }
}
