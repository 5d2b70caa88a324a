import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// `replica switch-account a`, with accounts a to e signed in, killed at every step that changes the
/// disk: each unlink, rmdir, ftruncate, fdatasync and pwrite64 (the last two are how SQLite commits),
/// one trial per step, by strace's fault injection. After each, the next replica command must finish the
/// whole switch: a alone signed in, with its data, and no byte of the other accounts' text in any file.
@Suite(.serialized) struct SwitchAccountKillTests {
    static let accounts: [AccountID] = ["a", "b", "c", "d", "e"]
    static let syscalls = ["unlink", "rmdir", "ftruncate", "fdatasync", "pwrite64"]

    static func canary(_ account: AccountID) -> String { "qqswitch\(account.rawValue)canary" }

    static var strace: String? {
        ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// A store with accounts a to e, each with an indexed item and a projected record carrying its canary.
    ///
    /// Made by `replica` processes, not by a `Store` of the test process: a run of ten once saw the files
    /// of such a store closed more than a minute after it was released (SQLite removes a `-shm` file at
    /// its last close), while the trials copied the template. A process that has exited holds nothing.
    static func makeTemplate(at path: String) async throws {
        try await makeTemplate(["--store", path])
    }

    /// The same accounts, records and items, in the store `place` names (`--store`, `--database`).
    static func makeTemplate(_ place: [String]) async throws {
        for account in accounts {
            let canary = canary(account)
            let item =
                #"{"uniqueIdentifier": "item", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "\#(canary)", "textContent": "\#(canary) body", "contentType": "public.plain-text"}}"#
            let record =
                #"{"account": "\#(account)", "kind": "note", "id": "1", "version": 1, "fields": {"title": "\#(canary)"}}"#
            for (arguments, input) in [
                (["accounts", "sign-in", account.rawValue], nil),
                (["import", "--account", account.rawValue, "-"], item),
                (["records", "import", "-"], record),
            ] {
                let result = try await ReplicaProcess.running(place + arguments, input: input)
                #expect(result.status == 0, "\(arguments): \(result.standardError)")
            }
        }
    }

    /// `replica switch-account a` on the store `place` names, killed by strace at the `step`-th `syscall`
    /// (or finished, when it makes fewer).
    static func switchToA(_ place: [String], killedAt syscall: String, step: Int, strace: String) async throws
        -> ProcessResult
    {
        try await ReplicaProcess.running(
            executable: URL(fileURLWithPath: strace),
            [
                "-f", "-o", "/dev/null", "-e", "trace=\(syscall)", "-e", "inject=\(syscall):signal=KILL:when=\(step)",
                ReplicaProcess.executable.path,
            ] + place + ["switch-account", "a"])
    }

    /// After `switched`: the next command, whatever it is, finishes the switch if it was recorded; if the
    /// kill came before that, nothing changed at all. Nothing in between. A switch run again, as the user
    /// would, completes; a's items stay searchable. `textLeft` names the other accounts whose canary is
    /// still kept. Returns whether the switch had been recorded.
    static func expectFinished(
        _ switched: ProcessResult, _ place: [String], _ what: String,
        textLeft: () throws -> [AccountID]
    ) async throws -> Bool {
        if !switched.wasSignaled {
            #expect(switched.status == 0, "\(what): \(switched.standardError)")
        }
        let next = try await ReplicaProcess.running(place + ["accounts"])
        #expect(next.status == 0, "\(what): \(next.standardError)")
        let signedIn = next.standardOutput
        let left = try textLeft()
        let recorded = signedIn == "a\n"
        if recorded {
            #expect(left.isEmpty, "\(what): the text of \(left) is still kept")
        } else {
            #expect(
                switched.wasSignaled && signedIn == "a\nb\nc\nd\ne\n" && left.count == 4,
                "\(what): half a switch: signed in \(signedIn.split(separator: "\n")), text left of \(left)")
            #expect(try await ReplicaProcess.running(place + ["switch-account", "a"]).status == 0, "\(what)")
            #expect(try await ReplicaProcess.running(place + ["accounts"]).standardOutput == "a\n", "\(what)")
        }
        let search = try await ReplicaProcess.running(place + ["search", "--json", Self.canary("a")])
        #expect(search.standardOutput.contains(#""account":"a""#), "\(what): a's items are not searchable")
        return recorded
    }

    @Test func aSwitchKilledAtAnyStepIsFinishedByTheNextCommand() async throws {
        let strace = try #require(
            Self.strace, "this test needs strace (apt-get install strace; scripts/setup-system.sh does)")
        let directory = try TemporaryDirectory()
        let template = directory.path + "/template"
        try await Self.makeTemplate(at: template)
        for account in Self.accounts {
            #expect(!directory.filesContaining(Self.canary(account)).isEmpty, "the template holds \(account)'s text")
        }

        var kills: [String: Int] = [:]
        var recordedBeforeKill = 0
        for syscall in Self.syscalls {
            for step in 1...2000 {
                let trial = directory.path + "/trial"
                try? FileManager.default.removeItem(atPath: trial)
                try FileManager.default.copyItem(atPath: template, toPath: trial)
                let switched = try await Self.switchToA(
                    ["--store", trial], killedAt: syscall, step: step, strace: strace)
                let recorded = try await Self.expectFinished(
                    switched, ["--store", trial], "killed at \(syscall) #\(step)"
                ) {
                    Self.accounts.dropFirst().filter { account in
                        directory.filesContaining(Self.canary(account)).contains { $0.path.hasPrefix(trial + "/") }
                    }
                }
                if recorded && switched.wasSignaled { recordedBeforeKill += 1 }
                guard switched.wasSignaled else { break }
                kills[syscall, default: 0] += 1
            }
        }
        // Every kind of step happens in a switch of four accounts' files; none went untried.
        for syscall in Self.syscalls {
            #expect(kills[syscall, default: 0] >= 1, "no \(syscall) was killed: \(kills)")
        }
        // Most kills land after the switch was recorded, and those are the ones that must be finished.
        #expect(
            recordedBeforeKill > kills.values.reduce(0, +) / 2,
            "\(recordedBeforeKill) of \(kills) kills came after the switch was recorded")
        print("switch-account killed at \(kills.map { "\($0.value) \($0.key)" }.sorted().joined(separator: ", "))")
    }

    /// On PostgreSQL, killed as it sends each statement (`sendto`, one a statement: libpq writes a message
    /// whole), one trial per statement, each on a copy of the same database. A switch is recorded in one
    /// transaction and each account's content goes in one more, so after each kill the next command
    /// finds a alone signed in with no row of the others' text, or all five signed in and the rest of
    /// their text where it was; then a switch run again completes.
    @Test(
        .enabled(
            if: PostgresTestServer.isEnabled,
            "PostgreSQL is not installed here or could not start (why: standard error)"))
    func onPostgreSQLASwitchKilledAtAnyStatementIsFinishedByTheNextCommand() async throws {
        let strace = try #require(
            Self.strace, "this test needs strace (apt-get install strace; scripts/setup-system.sh does)")
        let template = CLIPlace(directory: try TemporaryDirectory())
        try await template.use(.postgres)
        try await Self.makeTemplate(template.arguments)
        for account in Self.accounts {
            #expect(
                try !CrashTests.placesHolding(Self.canary(account), template).isEmpty,
                "the template holds \(account)'s text")
        }

        var kills = 0
        var recordedBeforeKill = 0
        for step in 1...500 {
            let trial = CLIPlace(directory: try TemporaryDirectory())
            try trial.use(copyOf: template)
            let switched = try await Self.switchToA(trial.arguments, killedAt: "sendto", step: step, strace: strace)
            let what = "killed at sendto #\(step)"
            let recorded = try await Self.expectFinished(switched, trial.arguments, what) {
                try Self.accounts.dropFirst().filter { try !CrashTests.placesHolding(Self.canary($0), trial).isEmpty }
            }
            if recorded && switched.wasSignaled { recordedBeforeKill += 1 }
            #expect(try CrashTests.placesHolding(Self.canary("a"), trial).count >= 1, "\(what): a's text is gone")
            guard switched.wasSignaled else { break }
            kills += 1
        }
        // A switch of four accounts sends more than a handful of statements, and most come after it is recorded.
        #expect(kills >= 8, "only \(kills) statements were killed")
        #expect(
            recordedBeforeKill > kills / 2, "\(recordedBeforeKill) of \(kills) kills came after the switch was recorded"
        )
        print(
            "switch-account on PostgreSQL killed at each of its \(kills) statements, \(recordedBeforeKill) after it was recorded"
        )
    }
}
