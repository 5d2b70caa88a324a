public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Whether no process has the id `pid` any more: `kill(pid, 0)` fails with `ESRCH`. A zombie (ended but
/// not reaped by its parent) still counts as there.
public func processIsGone(_ pid: pid_t) -> Bool {
    kill(pid, 0) == -1 && errno == ESRCH
}

/// A plugin (source or enricher) as a hostile user writes one, in Python 3: it ignores SIGTERM, starts a
/// grandchild (`sleep 300`, which inherits the ignored SIGTERM), and writes "PID GRANDCHILD-PID" to the
/// file `NAME` in the folder given as its first argument (renamed into place, so a reader never sees half
/// of it). `body` is the rest of the script; it may call `started(name)` and `hang()` (sleep forever,
/// never reading standard input again), and `send(message)` (one protocol line).
public enum HostilePlugin {
    public static func script(_ body: String) -> String {
        """
        import json, os, signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        pids = sys.argv[1]
        def send(message):
            print(json.dumps(message), flush=True)
        def started(name):
            grandchild = subprocess.Popen(["sleep", "300"])
            with open(os.path.join(pids, name + ".tmp"), "w") as f:
                f.write("%d %d" % (os.getpid(), grandchild.pid))
            os.rename(os.path.join(pids, name + ".tmp"), os.path.join(pids, name))
        def hang():
            while True:
                time.sleep(3600)

        """ + body
    }

    /// The plugin's own process id and its grandchild's, once `started(name)` wrote them to `folder`.
    public static func processes(_ name: String, in folder: String) -> [pid_t]? {
        guard let text = try? String(contentsOfFile: folder + "/" + name, encoding: .utf8) else { return nil }
        let pids = text.split(separator: " ").compactMap { pid_t($0) }
        return pids.count == 2 ? pids : nil
    }

    /// Kills what a failed test left running (a plugin and its grandchild, orphaned).
    public static func cleanUp(_ pids: [pid_t]?) {
        for pid in pids ?? [] where !processIsGone(pid) { kill(pid, SIGKILL) }
    }
}
