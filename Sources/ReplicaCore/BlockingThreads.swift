import Foundation

/// The threads ``Blocking`` runs work on: one for each piece of work running at once, started when none is
/// idle, kept for ten seconds of idleness after.
///
/// Dispatch's queues share a pool that grows only slowly past the number of cores when its threads
/// block, and on Linux every serial queue (each SQLite connection's) draws from that pool too. Work
/// that waits for a long time (a child process, a plugin's silence, a lock another process holds for
/// minutes) would keep that pool's few threads, and every connection's queue would wait behind it.
/// These threads are never shared with anything else, so blocking here delays nobody.
final class BlockingThreads: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var next = 0
    private var idle = 0
    private let idleLifetime: TimeInterval

    init(idleLifetime: TimeInterval = 10) {
        self.idleLifetime = idleLifetime
    }

    /// Runs `job` on an idle thread, or on a new one when each queued job already has an idle thread.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let startsThread = jobs.count - next > idle
        if !startsThread { condition.signal() }
        condition.unlock()
        if startsThread {
            let thread = Thread { [self] in work() }
            thread.name = "replica.blocking"
            thread.start()
        }
    }

    private func work() {
        condition.lock()
        while true {
            if next < jobs.count {
                let job = jobs[next]
                next += 1
                if next == jobs.count { jobs.removeAll(keepingCapacity: true); next = 0 }
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            idle += 1
            let woken = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
            idle -= 1
            if !woken && next >= jobs.count { break }
        }
        condition.unlock()
    }
}
