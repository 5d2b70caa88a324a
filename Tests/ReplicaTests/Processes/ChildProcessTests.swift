import Foundation
import ReplicaTestSupport
import Synchronization
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ChildProcessTests {
    func readAll(_ handle: FileHandle?) throws -> String {
        String(decoding: try #require(handle).readDataToEndOfFile(), as: UTF8.self)
    }

    @Test func theChildGetsOnlyItsThreeStreams() throws {
        // A descriptor of ours that is not close-on-exec, as a file opened by a library might be.
        let directory = try TemporaryDirectory()
        let held = Glibc.open(directory.path + "/held", O_CREAT | O_RDWR, 0o600)
        #expect(held > 2)
        defer { close(held) }
        let child = try ChildProcess(
            ["/bin/sh", "-c", "for n in 0 1 2 \(held); do [ -e /proc/$$/fd/$n ] && echo $n; done; exit 0"],
            standardOutput: .pipe)
        #expect(try readAll(child.standardOutput) == "0\n1\n2\n")
        #expect(child.waitUntilExit() == ChildProcess.Ending(status: 0, wasSignaled: false))
    }

    @Test func signalsTheParentIgnoresStartAtTheirDefaults() throws {
        let previous = Glibc.signal(SIGUSR2, SIG_IGN)
        defer { Glibc.signal(SIGUSR2, previous) }
        let child = try ChildProcess(["/bin/sh", "-c", "kill -USR2 $$; sleep 5"])
        #expect(child.waitUntilExit() == ChildProcess.Ending(status: SIGUSR2, wasSignaled: true))
    }

    @Test func pipesCarryInputAndOutputBothWays() throws {
        let child = try ChildProcess(
            ["/bin/sh", "-c", "cat; echo oops >&2"], standardInput: .pipe, standardOutput: .pipe, standardError: .pipe)
        try #require(child.standardInput).write(contentsOf: Data("one\ntwo\n".utf8))
        try #require(child.standardInput).close()
        #expect(try readAll(child.standardOutput) == "one\ntwo\n")
        #expect(try readAll(child.standardError) == "oops\n")
        #expect(child.waitUntilExit().status == 0)
    }

    @Test func anExitStatusAndASignalAreToldApart() throws {
        #expect(
            try ChildProcess(["/bin/sh", "-c", "exit 3"]).waitUntilExit()
                == ChildProcess.Ending(status: 3, wasSignaled: false))
        #expect(
            try ChildProcess(["/bin/sh", "-c", "kill -9 $$"]).waitUntilExit()
                == ChildProcess.Ending(status: 9, wasSignaled: true))
    }

    @Test func aChildStillRunningCanBeWaitedForWithADeadlineAndStopped() throws {
        let child = try ChildProcess(["sleep", "infinity"])
        #expect(child.isRunning)
        #expect(child.wait(timeout: 0.05) == nil)
        child.signal(SIGTERM)
        #expect(child.waitUntilExit() == ChildProcess.Ending(status: SIGTERM, wasSignaled: true))
        #expect(!child.isRunning)
    }

    @Test func anExecutableThatIsNotThereIsAClearError() {
        #expect {
            try ChildProcess(["/nonexistent/plugin"])
        } throws: { error in
            let error = error as? ReplicaError
            return error?.code == .fileSystem
                && error?.message == "cannot start /nonexistent/plugin: No such file or directory"
        }
    }

    /// The first line `handle` gives, without waiting for the end of the stream.
    func firstLine(_ handle: FileHandle?) throws -> String {
        let handle = try #require(handle)
        var bytes = Data()
        while !bytes.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            bytes += chunk
        }
        return String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    @Test func aSignalReachesEverythingInTheChildsProcessGroup() async throws {
        let child = try ChildProcess(["/bin/sh", "-c", "sleep 300 >/dev/null & echo $!; wait"], standardOutput: .pipe)
        let grandchild = try #require(pid_t(try firstLine(child.standardOutput)))
        defer { HostilePlugin.cleanUp([grandchild]) }
        child.signal(SIGKILL)
        #expect(child.waitUntilExit() == ChildProcess.Ending(status: SIGKILL, wasSignaled: true))
        #expect(
            await eventually(timeout: 120) { processIsGone(grandchild) }, "the grandchild outlived its parent's SIGKILL"
        )
    }

    @Test func whatTheChildLeavesRunningEndsWhenItExits() async throws {
        let child = try ChildProcess(["/bin/sh", "-c", "sleep 300 >/dev/null & echo $!"], standardOutput: .pipe)
        let grandchild = try #require(pid_t(try firstLine(child.standardOutput)))
        defer { HostilePlugin.cleanUp([grandchild]) }
        #expect(child.waitUntilExit() == ChildProcess.Ending(status: 0, wasSignaled: false))
        #expect(await eventually(timeout: 120) { processIsGone(grandchild) }, "the grandchild outlived the child")
    }

    @Test func terminatingAChildThatIgnoresSIGTERMEndsItWithSIGKILLAfterTheGrace() throws {
        let child = try ChildProcess(
            ["/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"], standardOutput: .pipe)
        #expect(try firstLine(child.standardOutput) == "ready")
        #expect(child.terminate(grace: 0.2) == ChildProcess.Ending(status: SIGKILL, wasSignaled: true))
        #expect(!child.isRunning)
    }

    /// The parent-death signal also comes when only the thread that started the child ends: the child
    /// must not take that for this process's end.
    @Test func aChildOutlivesTheThreadThatStartedIt() async throws {
        let started = Mutex<ChildProcess?>(nil)
        // A child that never ends by itself: on a loaded machine this test once took longer than `sleep 30`.
        let thread = Thread { started.withLock { $0 = try? ChildProcess(["sleep", "infinity"]) } }
        thread.start()
        #expect(await eventually { thread.isFinished })
        let child = try #require(started.withLock { $0 })
        #expect(child.wait(timeout: 0.5) == nil, "the child ended with the thread that started it")
        #expect(child.terminate(grace: 5) == ChildProcess.Ending(status: SIGTERM, wasSignaled: true))
    }

    @Test func theEnvironmentIsTheOneGiven() throws {
        let child = try ChildProcess(
            ["/bin/sh", "-c", "echo \"$ONLY|$HOME\""], environment: ["ONLY": "this"], standardOutput: .pipe)
        #expect(try readAll(child.standardOutput) == "this|\n")
    }
}
