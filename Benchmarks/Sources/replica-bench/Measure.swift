import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Timing and statistics helpers.
enum Measure {
    /// Seconds taken by `body`.
    static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Seconds taken by synchronous `body`.
    static func secondsNow(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let rank = p / 100 * Double(sorted.count - 1)
        let low = Int(rank.rounded(.down))
        let high = min(low + 1, sorted.count - 1)
        return sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))
    }

    static func median(_ values: [Double]) -> Double { percentile(values, 50) }

    /// CPU time (user + system) this process has used, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// The peak resident set size of this process, in MiB.
    static func peakRSSMiB() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }

    static func format(_ value: Double, _ digits: Int = 2) -> String {
        String(format: "%.\(digits)f", value)
    }

    /// A fresh directory for one round.
    static func scratchDirectory(_ name: String) throws -> String {
        var template = Array((NSTemporaryDirectory() + "/replica-bench-\(name)-XXXXXX").utf8CString)
        guard let path = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw BenchError("cannot create a scratch directory")
        }
        return String(cString: path)
    }

    /// Removes a scratch directory; with `REPLICA_BENCH_KEEP` set, keeps it and says where it is (to
    /// look into a store the benchmark built).
    static func removeDirectory(_ path: String) {
        if ProcessInfo.processInfo.environment["REPLICA_BENCH_KEEP"] != nil {
            FileHandle.standardError.write(Data("kept \(path)\n".utf8))
            return
        }
        try? FileManager.default.removeItem(atPath: path)
    }
}
