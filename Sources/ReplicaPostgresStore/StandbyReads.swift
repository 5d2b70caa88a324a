import Foundation
import ReplicaCore
import ReplicaPostgres
import Synchronization

/// Reads served by a streaming-replication standby of the store's database, without losing this
/// process's own writes.
///
/// Every transaction this process commits on the primary (but those begun read-only, which wrote
/// nothing) leaves its write-ahead log position here (``noteCommit(_:)``, from the primary pools'
/// ``PostgresConnection/Options/committed``). A read on the
/// standby first waits, up to ``replayWait``, until the standby has replayed past the latest of them
/// (`pg_last_wal_replay_lsn()`), and only then takes its snapshot; past the wait, or when the standby
/// cannot be reached or its read fails, the read goes to the primary (``read(_:)`` returns `nil`). After a
/// standby that could not be reached, reads go to the primary for ``retryAfter`` before it is tried again.
///
/// Writes by other processes are seen once the standby replays them: a standby is behind its primary
/// by its replication lag, which PostgreSQL reports in `pg_stat_replication`.
package final class StandbyReads: Sendable {
    /// The standby's connections.
    package let pool: PostgresPool
    /// How long a read waits for the standby to replay this process's last commit before it goes to the primary.
    package let replayWait: Duration
    /// How long reads go to the primary after the standby could not be reached.
    package let retryAfter: Duration
    private let state = Mutex(State())
    private let clock = ContinuousClock()

    private struct State {
        /// The latest commit position this process saw on the primary.
        var written = WALPosition(0)
        /// Until when the standby is passed over, after it could not be reached.
        var passOverUntil: ContinuousClock.Instant?
        var statistics = ReadRouting()
    }

    /// Where reads went, and how long those that followed a write waited for the standby.
    package struct ReadRouting: Sendable {
        /// Reads the standby served.
        package var standby = 0
        /// Reads that went to the primary because the standby had not replayed this process's last
        /// write within the wait.
        package var primaryAfterWaiting = 0
        /// Reads that went to the primary because the standby could not be reached or its read failed.
        package var primaryStandbyUnavailable = 0
        /// How long each standby read waited for the replay of this process's last write, the latest
        /// 10,000 (reads with no write of this process before them do not wait and are not counted).
        package var replayWaits: [Duration] = []
    }

    /// - Parameters:
    ///   - pool: connections to the standby.
    ///   - replayWait: the longest a read waits for the standby to catch up with this process's writes.
    ///   - retryAfter: how long reads pass the standby over after it could not be reached.
    package init(pool: PostgresPool, replayWait: Duration, retryAfter: Duration = .seconds(1)) {
        self.pool = pool
        self.replayWait = replayWait
        self.retryAfter = retryAfter
    }

    /// Records a commit this process made on the primary: reads after it wait for the standby to replay it.
    package func noteCommit(_ position: WALPosition) {
        state.withLock { $0.written = max($0.written, position) }
    }

    /// Where reads went so far.
    package var routing: ReadRouting { state.withLock { $0.statistics } }

    /// Runs `body` on a standby connection that has replayed this process's last commit, or returns
    /// `nil` when the read must go to the primary instead (the standby is behind past ``replayWait``,
    /// cannot be reached, or `body` failed there: the primary's answer is the one that counts).
    @available(*, noasync, message: "it waits for the standby; in async code run it in Blocking.run")
    package func read<T>(_ body: (PostgresConnection) throws -> T) -> T? {
        let (needed, passOver) = state.withLock { state -> (WALPosition, Bool) in
            if let until = state.passOverUntil, clock.now < until { return (state.written, true) }
            state.passOverUntil = nil
            return (state.written, false)
        }
        if passOver {
            count { $0.primaryStandbyUnavailable += 1 }
            return nil
        }
        do {
            return try pool.withConnection { connection -> T? in
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
            let unreachable = (error as? PostgresError).map { [.connectionRefused, .serverUnreachable, .connectionLost].contains($0.code) } ?? false
            state.withLock { state in
                if unreachable { state.passOverUntil = clock.now.advanced(by: retryAfter) }
                state.statistics.primaryStandbyUnavailable += 1
            }
            return nil
        }
    }

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
            let sleep = min(pause, replayWait - waited).components
            Thread.sleep(forTimeInterval: Double(sleep.seconds) + Double(sleep.attoseconds) / 1e18)
            pause = min(pause * 2, .milliseconds(5))
        }
    }

    private func count(_ change: (inout ReadRouting) -> Void) {
        state.withLock { change(&$0.statistics) }
    }
}
