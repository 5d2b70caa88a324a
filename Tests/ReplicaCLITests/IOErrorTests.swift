import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore

/// The disk fails: strace's fault injection makes one system call of a command fail with EIO (or
/// ENOSPC), one trial per call, for every write, sync and read the command makes. Each time the command
/// either succeeds or says in words what failed; what was committed before is intact; and once the fault
/// is gone the same command completes the work.
@Suite(.serialized) struct IOErrorTests {
    static let strace = SwitchAccountKillTests.strace

    static let batch = """
        {"account": "a", "kind": "note", "id": "2", "version": 1, "fields": {"title": "meadow plan", "body": "quartz"}}
        {"account": "a", "kind": "note", "id": "3", "version": 1, "fields": {"title": "orchid plan", "body": "ember"}}
        """

    /// A store with one committed record, projected, and a file tree source with one file, synced.
    static func makeTemplate(at directory: String) throws {
        let store = directory + "/template"
        // Signed in by a process, not a `Store` of the test process, which might close its catalog (and
        // remove its `-shm` file) while a trial copies the template (SwitchAccountKillTests says more).
        #expect(try ReplicaProcess.run(["--store", store, "accounts", "sign-in", "a"]).status == 0)
        #expect(
            try ReplicaProcess.run(
                ["--store", store, "records", "import", "-"],
                input: #"{"account": "a", "kind": "note", "id": "1", "version": 1, "fields": {"title": "harbor plan"}}"#
            ).status == 0)
        try FileManager.default.createDirectory(atPath: directory + "/tree", withIntermediateDirectories: true)
        try "lantern notes".write(toFile: directory + "/tree/one.txt", atomically: true, encoding: .utf8)
        #expect(
            try ReplicaProcess.run(["--store", store, "sources", "add", "files", "--account", "a", directory + "/tree"])
                .status == 0)
        #expect(try ReplicaProcess.run(["--store", store, "sync"]).status == 0)
    }

    /// Whether the store's files pass SQLite's and FTS5's integrity checks.
    static func expectIntact(_ store: String, _ what: String) throws {
        for file in ["accounts/a/indexes/default.sqlite", "accounts/a/records.sqlite", "catalog.sqlite"] {
            try StoreFiles.expectSound(store + "/" + file, what)
        }
    }

    static func titles(_ store: String) async throws -> Set<String> {
        try await titles(["--store", store])
    }

    /// The titles a search of "plan OR lantern" finds in the store `place` names (`--store`, `--database`).
    static func titles(_ place: [String]) async throws -> Set<String> {
        let search = try await ReplicaProcess.running(place + ["search", "--json", "plan OR lantern"])
        let results = try JSON.parse(search.standardOutput)["results"]?.arrayValue ?? []
        return Set(results.compactMap { $0["title"]?.stringValue })
    }

    /// Runs `arguments` on a fresh copy of the template with the `when`-th `syscall` failing with `error`.
    /// Returns `nil` once the command makes fewer such calls than that.
    static func runFailing(
        _ directory: String, _ syscall: String, error: String, when step: Int, _ arguments: [String],
        input: String? = nil
    ) async throws -> (store: String, result: ProcessResult)? {
        let trial = directory + "/trial"
        try? FileManager.default.removeItem(atPath: trial)
        try FileManager.default.copyItem(atPath: directory + "/template", toPath: trial)
        return try await runFailing(
            ["--store", trial], syscall, error: error, when: step, arguments, input: input,
            log: directory + "/strace.log"
        )
        .map { (trial, $0) }
    }

    /// Runs `arguments` on the store `place` names with the `when`-th `syscall` failing with `error`
    /// (strace writes what it did to `log`); `nil` once the command makes fewer such calls than that.
    static func runFailing(
        _ place: [String], _ syscall: String, error: String, when step: Int, _ arguments: [String],
        input: String?, log: String
    ) async throws -> ProcessResult? {
        let strace = try #require(
            strace, "this test needs strace (apt-get install strace; scripts/setup-system.sh does)")
        let result = try await ReplicaProcess.running(
            executable: URL(fileURLWithPath: strace),
            [
                "-f", "-o", log, "-e", "trace=\(syscall)", "-e", "inject=\(syscall):error=\(error):when=\(step)",
                ReplicaProcess.executable.path,
            ] + place + arguments, input: input.map { Data($0.utf8) }, environment: ["REPLICA_MODEL_DIR": "off"])
        return try String(contentsOfFile: log, encoding: .utf8).contains("(INJECTED)") ? result : nil
    }

    @Test(arguments: [("pwrite64", "EIO"), ("fdatasync", "EIO"), ("pwrite64", "ENOSPC")])
    func aWriteThatFailsIsReportedInWordsAndLosesNothing(syscall: String, error: String) async throws {
        let directory = try TemporaryDirectory()
        try Self.makeTemplate(at: directory.path)
        var failures = 0
        for step in 1...400 {
            guard
                let (store, result) = try await Self.runFailing(
                    directory.path, syscall, error: error, when: step,
                    ["records", "import", "-"], input: Self.batch)
            else { break }
            let what = "records import with \(syscall) #\(step) failing with \(error)"
            #expect(!result.wasSignaled && [0, 1].contains(result.status), "\(what): \(result.standardError)")
            if result.status == 1 {
                failures += 1
                let said = result.standardError
                #expect(
                    said.contains("the disk") && said.contains("what was written before is intact"), "\(what): \(said)")
            }
            // What was committed before is there, and the files are sound.
            try Self.expectIntact(store, what)
            let before = try await Self.titles(store)
            #expect(before.isSuperset(of: ["harbor plan", "one.txt"]), "\(what): \(before)")
            // With the fault gone, the same command completes the work.
            #expect(
                try await ReplicaProcess.running(["--store", store, "records", "import", "-"], input: Self.batch).status
                    == 0, "\(what)")
            #expect(
                try await Self.titles(store) == ["harbor plan", "one.txt", "meadow plan", "orchid plan"], "\(what)")
        }
        // A failed write always reaches replica; a failed sync only when the process closes its files
        // before it exits and SQLite checks the log into the file then (commits in write-ahead-log mode
        // do not sync), which it does not always do.
        #expect(failures >= 1 || syscall == "fdatasync", "no \(syscall) failure with \(error) reached replica")
        print("records import: \(failures) failed \(syscall) calls (\(error)) reported in words")
    }

    @Test func aReadThatFailsIsReportedInWordsAndChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        try Self.makeTemplate(at: directory.path)
        var failures = 0
        for step in 1...400 {
            guard
                let (store, result) = try await Self.runFailing(
                    directory.path, "pread64", error: "EIO", when: step,
                    ["search", "--json", "plan OR lantern"])
            else { break }
            let what = "search with pread64 #\(step) failing"
            // The first reads are the dynamic loader's, before replica runs.
            if result.standardError.contains("error while loading shared libraries") { continue }
            #expect(!result.wasSignaled && [0, 1].contains(result.status), "\(what): \(result.standardError)")
            if result.status == 1 {
                failures += 1
                #expect(result.standardError.contains("the disk"), "\(what): \(result.standardError)")
            }
            try Self.expectIntact(store, what)
            #expect(try await Self.titles(store) == ["harbor plan", "one.txt"], "\(what)")
        }
        #expect(failures >= 1, "no failed read reached replica")
        print("search: \(failures) failed pread64 calls reported in words, the rest absorbed")
    }

    // MARK: On PostgreSQL: the connection to the server fails

    /// On PostgreSQL the disk is the server's; what replica's process can lose is its connection. Each
    /// `recvfrom` of a search (the server's answers, and the sign-in's) fails in turn with EIO, each trial
    /// on a copy of one template database: the search succeeds or says in words what failed, and changes
    /// nothing.
    @Test(
        .enabled(
            if: PostgresTestServer.isEnabled,
            "PostgreSQL is not installed here or could not start (why: standard error)"))
    func onPostgreSQLAnAnswerThatCannotBeReadIsReportedInWordsAndChangesNothing() async throws {
        let template = CLIPlace(directory: try TemporaryDirectory())
        try await template.use(.postgres)
        try await Self.makePostgresTemplate(template)
        var failures = 0
        for step in 1...400 {
            let trial = CLIPlace(directory: try TemporaryDirectory())
            try trial.use(copyOf: template)
            guard
                let result = try await Self.runFailing(
                    trial.arguments, "recvfrom", error: "EIO", when: step, ["search", "--json", "plan"],
                    input: nil, log: trial.directory.path + "/strace.log")
            else { break }
            let what = "search with recvfrom #\(step) failing"
            #expect(!result.wasSignaled && [0, 1].contains(result.status), "\(what): \(result.standardError)")
            if result.status == 1 {
                failures += 1
                #expect(Self.saysTheConnectionFailed(result.standardError), "\(what): \(result.standardError)")
            }
            #expect(try await Self.titles(trial.arguments) == ["harbor plan"], "\(what)")
        }
        #expect(failures >= 3, "only \(failures) failed reads reached replica")
        print("search on PostgreSQL: \(failures) failed recvfrom calls reported in words")
    }

    /// A `sendto` of `records import` fails with EIO, every seventh in turn, each trial on a copy of one
    /// template database. libpq drops what it could not send and says nothing until it reads, and the
    /// server, which got nothing, waits for the statement; without replica's check on a late reply the
    /// command waited for ever. Each trial ends within its time: the import succeeds or says in words
    /// that the connection failed, what was committed before is there, and the same import run again
    /// completes the work. The URL's `connect_timeout` of 2 seconds bounds a failure while signing in.
    @Test(
        .enabled(
            if: PostgresTestServer.isEnabled,
            "PostgreSQL is not installed here or could not start (why: standard error)"))
    func onPostgreSQLAStatementThatCannotBeSentIsReportedInWordsAndLosesNothing() async throws {
        let template = CLIPlace(directory: try TemporaryDirectory())
        try await template.use(.postgres)
        try await Self.makePostgresTemplate(template)
        var failures = 0
        for step in stride(from: 3, through: 400, by: 7) {
            let trial = CLIPlace(directory: try TemporaryDirectory())
            try trial.use(copyOf: template)
            let place = try #require(
                trial.databaseURL.map { ["--store", trial.store, "--database", $0 + " connect_timeout=2"] })
            guard
                let result = try await Self.runFailing(
                    place, "sendto", error: "EIO", when: step, ["records", "import", "-"],
                    input: Self.batch, log: trial.directory.path + "/strace.log")
            else { break }
            let what = "records import with sendto #\(step) failing"
            #expect(!result.wasSignaled && [0, 1].contains(result.status), "\(what): \(result.standardError)")
            if result.status == 1 {
                failures += 1
                #expect(Self.saysTheConnectionFailed(result.standardError), "\(what): \(result.standardError)")
            }
            #expect(try await Self.titles(place).isSuperset(of: ["harbor plan"]), "\(what)")
            #expect(
                try await ReplicaProcess.running(place + ["records", "import", "-"], input: Self.batch).status == 0,
                "\(what)")
            #expect(try await Self.titles(place) == ["harbor plan", "meadow plan", "orchid plan"], "\(what)")
        }
        #expect(failures >= 3, "only \(failures) failed sends reached replica")
        print("records import on PostgreSQL: \(failures) failed sendto calls reported in words")
    }

    /// A store on PostgreSQL with one committed record, projected.
    static func makePostgresTemplate(_ place: CLIPlace) async throws {
        #expect(try await ReplicaProcess.running(place.arguments + ["accounts", "sign-in", "a"]).status == 0)
        #expect(
            try await ReplicaProcess.running(
                place.arguments + ["records", "import", "-"],
                input: #"{"account": "a", "kind": "note", "id": "1", "version": 1, "fields": {"title": "harbor plan"}}"#
            ).status == 0)
    }

    /// Whether `said` is replica's own words for a connection that failed: it names the server and what
    /// went wrong (libpq's words, which quote no data), not SQL or a raw server message.
    static func saysTheConnectionFailed(_ said: String) -> Bool {
        said.hasPrefix("replica: error: ") && said.contains("the PostgreSQL server on the socket in")
            && ["could not receive data from server", "could not be reached", "did not answer in time", "connection"]
                .contains { said.contains($0) }
    }
}
