import Foundation
import Replica
import ReplicaCore
import ReplicaIndex
import ReplicaPostgresHome
import ReplicaTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A store on a small tmpfs filled to the last few kilobytes: reading commands and sign-out (which is
/// what frees the space) must still work, and nothing committed is lost. Needs the right to mount (root):
/// skipped where `mount` is refused.
/// `mount` refused (it needs root).
struct MountFailed: Error {
    var message: String
}

/// Whether this process may mount a tmpfs: tried once on a scratch folder.
let canMountTmpfs: Bool = {
    guard let directory = try? TemporaryDirectory(),
        let disk = try? FullDiskTests.mountTmpfs(size: "1m", in: directory)
    else { return false }
    FullDiskTests.unmount(disk)
    return true
}()

@Suite(.serialized, .enabled(if: canMountTmpfs, "mounting a tmpfs needs root"))
struct FullDiskTests {

    /// Mounts a tmpfs of `size` (`mount -o size=…`) on a new folder of `directory`; needs root.
    static func mountTmpfs(size: String, in directory: TemporaryDirectory) throws -> String {
        let disk = directory.path + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mounted = try ReplicaProcess.run(
            executable: URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", disk])
        guard mounted.status == 0 else {
            throw MountFailed(message: mounted.standardError)
        }
        return disk
    }

    static func unmount(_ disk: String) {
        _ = try? ReplicaProcess.run(executable: URL(fileURLWithPath: "/bin/umount"), [disk])
    }

    @Test func readingAndSigningOutWorkOnAFullDisk() throws {
        let directory = try TemporaryDirectory()
        let disk = try Self.mountTmpfs(size: "3m", in: directory)
        defer { Self.unmount(disk) }

        let store = disk + "/store"
        func replica(_ arguments: String..., input: String? = nil) throws -> ProcessResult {
            try ReplicaProcess.run(["--store", store] + arguments, input: input)
        }
        try Fixtures.signIn(store: store, "a", "b")
        for account in ["a", "b"] {
            let lines = (1...3).map {
                #"{"uniqueIdentifier": "\#(account)\#($0)", "attributes": {"title": "harbor zzfull\#(account) \#($0)"}}"#
            }
            #expect(try replica("import", "--account", account, "-", input: lines.joined(separator: "\n")).status == 0)
        }

        // Fill the disk to its last 24 KiB.
        var info = statvfs()
        #expect(statvfs(disk, &info) == 0)
        let free = Int(info.f_bavail) * Int(info.f_frsize)
        let filler = open(disk + "/filler", O_CREAT | O_WRONLY, 0o600)
        #expect(posix_fallocate(filler, 0, off_t(free - 24 * 1024)) == 0)
        close(filler)

        let status = try replica("status")
        #expect(status.status == 0, "\(status.standardError)")
        #expect(
            status.standardOutput.contains("account a: 3 items") && status.standardOutput.contains("account b: 3 items")
        )
        let search = try replica("search", "--json", "harbor")
        #expect(search.status == 0, "\(search.standardError)")
        #expect(search.standardOutput.components(separatedBy: #""uniqueIdentifier""#).count == 7)

        let signOut = try replica("accounts", "sign-out", "a")
        #expect(signOut.status == 0, "\(signOut.standardError)")
        #expect(try replica("accounts").standardOutput == "b\n")
        // (Scanned from the mount point: a scan of the folder above does not enter the mounted disk.)
        let storeURL = URL(fileURLWithPath: store)
        #expect(
            TemporaryDirectory.filesContaining("zzfulla", under: storeURL).isEmpty, "a's text is gone from the disk")
        #expect(!TemporaryDirectory.filesContaining("zzfullb", under: storeURL).isEmpty, "b's is kept")

        // With room again, everything works as before.
        try FileManager.default.removeItem(atPath: disk + "/filler")
        #expect(
            try replica(
                "import", "--account", "b", "-",
                input: #"{"uniqueIdentifier": "b4", "attributes": {"title": "harbor later"}}"#
            ).status == 0)
        #expect(
            try replica("search", "--json", "harbor").standardOutput.components(separatedBy: #""uniqueIdentifier""#)
                .count == 5)
    }

    /// A disk with no room at all, not even for the catalog to record a sign-out: the leaving account's
    /// files are deleted first, which makes the room, then the sign-out (or the switch) is recorded and
    /// finished as usual, and the person is told why the order changed.
    @Test(arguments: [["accounts", "sign-out", "a"], ["switch-account", "b"]])
    func aSignOutOnADiskTooFullToRecordItDeletesTheFilesFirst(command: [String]) throws {
        let directory = try TemporaryDirectory()
        let disk = try Self.mountTmpfs(size: "3m", in: directory)
        defer { Self.unmount(disk) }

        let store = disk + "/store"
        func replica(_ arguments: [String], input: String? = nil) throws -> ProcessResult {
            try ReplicaProcess.run(["--store", store] + arguments, input: input)
        }
        try Fixtures.signIn(store: store, "a", "b")
        for account in ["a", "b"] {
            let lines = (1...3).map {
                #"{"uniqueIdentifier": "\#(account)\#($0)", "attributes": {"title": "harbor zzroom\#(account) \#($0)"}}"#
            }
            #expect(
                try replica(["import", "--account", account, "-"], input: lines.joined(separator: "\n")).status == 0)
        }

        // Fill the disk to its last byte.
        var info = statvfs()
        #expect(statvfs(disk, &info) == 0)
        let filler = open(disk + "/filler", O_CREAT | O_WRONLY, 0o600)
        #expect(posix_fallocate(filler, 0, off_t(Int(info.f_bavail) * Int(info.f_frsize))) == 0)
        close(filler)
        #expect(statvfs(disk, &info) == 0 && info.f_bavail == 0)

        let leaving = try replica(command)
        #expect(leaving.status == 0, "\(leaving.standardError)")
        #expect(
            leaving.standardError.contains(
                "the disk was too full to record the sign-out of account 'a'; its files were deleted first to make room"
            ),
            "\(leaving.standardError)")
        #expect(try replica(["accounts"]).standardOutput == "b\n")
        let storeURL = URL(fileURLWithPath: store)
        #expect(
            TemporaryDirectory.filesContaining("zzrooma", under: storeURL).isEmpty, "a's text is gone from the disk")
        #expect(!TemporaryDirectory.filesContaining("zzroomb", under: storeURL).isEmpty, "b's is kept")
    }

    /// On PostgreSQL, the server's disk full: a database whose files are in a tablespace on a small tmpfs,
    /// filled to the last byte (the write-ahead log stays on the server's own disk). Searches work; an
    /// import fails in words that say what to do, without the items' text, and loses nothing; signing an
    /// account out works, which drops its partitions and so makes room; and once there is room again,
    /// writes work as before.
    ///
    /// Through a store of this process whose sessions started before the disk filled: a session that
    /// starts on a full disk may be refused, since PostgreSQL writes its relation cache file as a session
    /// starts (after a change to the schema, such as a sign-in's partitions) and ends the session when
    /// that write fails. That is the server's, and `replica` then says it could not connect.
    @Test(
        .enabled(
            if: PostgresTestServer.isEnabled,
            "PostgreSQL is not installed here or could not start (why: standard error)"))
    func onPostgreSQLSearchingAndSigningOutWorkWhenTheServersDiskIsFull() async throws {
        let directory = try TemporaryDirectory("replica-pgfull")
        chmod(directory.path, 0o755)
        let disk = try await Blocking.run { try Self.mountTmpfs(size: "48m", in: directory) }
        defer { Self.unmount(disk) }
        _ = try await ReplicaProcess.running(executable: URL(fileURLWithPath: "/bin/chown"), ["postgres:", disk])
        let tablespace = try PostgresTestServer.makeTablespace(at: disk)
        defer { try? PostgresTestServer.dropTablespace(tablespace) }
        let database = try PostgresTestServer.makeMigratedDatabase(tablespace: tablespace)
        defer { withExtendedLifetime(database) {} }

        let store = try Store(
            directory: URL(fileURLWithPath: directory.path + "/store"), database: .postgres(url: database.url))
        for account: AccountID in ["a", "b"] {
            try await store.signIn(account)
            try await store.index(account: account).indexItems(
                (1...3).map {
                    Fixtures.item("\(account)\($0)", title: "harbor zzpgfull\(account) \($0)")
                })
        }
        let index = try await store.index(account: "b")
        #expect(try await store.search(SearchQuery("harbor")).count == 6)

        // Fill the disk to its last byte, with a file the server cannot remove.
        var info = statvfs()
        #expect(statvfs(disk, &info) == 0)
        let filler = open(disk + "/filler", O_CREAT | O_WRONLY, 0o600)
        #expect(posix_fallocate(filler, 0, off_t(Int(info.f_bavail) * Int(info.f_frsize))) == 0)
        close(filler)

        #expect(try await store.search(SearchQuery("harbor")).count == 6)
        let body = (1...200).map { _ in "zzpgsecret harbor" }.joined(separator: " ")
        let many = (1...300).map { Fixtures.item("n\($0)", title: "harbor new", text: "\(body) \($0)") }
        let refused = await #expect(throws: ReplicaError.self) { try await index.indexItems(many) }
        #expect(
            refused?.message.contains("has no disk space left") == true
                && refused?.message.contains("free space on the server's disk") == true,
            "\(String(describing: refused))")
        #expect(refused.map { !String(describing: $0).contains("zzpgsecret") } == true)
        #expect(try await index.itemCount() == 3, "nothing half-written")
        #expect(try await store.search(SearchQuery("harbor")).count == 6, "nothing lost")

        #expect(try await store.signOut("a"))
        #expect(try await store.signedInAccounts().map(\.id) == ["b"])

        try FileManager.default.removeItem(atPath: disk + "/filler")
        try await index.indexItems(many)
        #expect(try await index.itemCount() == 303)
    }

    /// A store whose file system is remounted read-only: every command says so plainly (not SQLite's
    /// "unable to open database file"), nothing committed is lost, and all works again once it is
    /// writable. Needs root, for `mount`.
    @Test func aReadOnlyStoreSaysSoAndRecovers() throws {
        try Self.remountReadOnly(leavingWriteAheadLogs: false)
    }

    /// The same with the write-ahead log and its shared-memory index left beside the catalog, as a process
    /// that exits without closing its connections leaves them: SQLite can then still read the read-only
    /// files, so whether a command noticed the read-only file system used to depend on which process had
    /// run last (the suite failed two runs in three). The store now looks at the file system before SQLite
    /// does.
    @Test func aReadOnlyStoreSaysSoEvenWithWriteAheadLogsLeftBehind() throws {
        try Self.remountReadOnly(leavingWriteAheadLogs: true)
    }

    /// Imports an item, remounts the store's file system read-only (first leaving the catalog's
    /// write-ahead log behind, if asked), checks that search, status and import each say so, and that all
    /// works again once it is read-write.
    static func remountReadOnly(leavingWriteAheadLogs: Bool) throws {
        let directory = try TemporaryDirectory()
        let disk = try mountTmpfs(size: "20m", in: directory)
        defer { unmount(disk) }
        let store = disk + "/store"
        func replica(_ arguments: String..., input: String? = nil) throws -> ProcessResult {
            try ReplicaProcess.run(["--store", store] + arguments, input: input)
        }
        func remount(_ mode: String) throws -> ProcessResult {
            try ReplicaProcess.run(executable: URL(fileURLWithPath: "/bin/mount"), ["-o", "remount,\(mode)", disk])
        }
        // Signed in by a replica process, not a Store in this one: a remount read-only is refused while any
        // process holds a file there open for writing, and a Store of the test process closes its catalog
        // only when its last reference goes (a 10-run repeat was refused once, with no holder left a moment
        // later).
        #expect(try replica("accounts", "sign-in", "a").status == 0)
        #expect(
            try replica(
                "import", "--account", "a", "-",
                input: #"{"uniqueIdentifier": "x1", "attributes": {"title": "harbor one"}}"#
            ).status == 0)
        if leavingWriteAheadLogs {
            // A reader that exits without closing leaves catalog.sqlite-wal and catalog.sqlite-shm behind.
            let leave = """
                import os, sqlite3, sys
                connection = sqlite3.connect(sys.argv[1])
                connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
                os._exit(0)
                """
            let python = try ReplicaProcess.run(
                executable: URL(fileURLWithPath: "/usr/bin/python3"), ["-c", leave, store + "/catalog.sqlite"])
            try #require(python.status == 0, "\(python.standardError)")
            try #require(FileManager.default.fileExists(atPath: store + "/catalog.sqlite-shm"))
        }

        let readOnly = try remount("ro")
        try #require(
            readOnly.status == 0, "mount said: \(readOnly.standardError); files open there: \(openFiles(under: disk))")
        for result in [
            try replica("search", "harbor"), try replica("status"),
            try replica(
                "import", "--account", "a", "-",
                input: #"{"uniqueIdentifier": "x2", "attributes": {"title": "harbor two"}}"#),
        ] {
            #expect(result.status == 1)
            #expect(
                result.standardError.contains("is on a file system mounted read-only")
                    && !result.standardError.contains("SQLite"),
                "\(result.standardError)")
        }
        try #require(try remount("rw").status == 0)
        #expect(
            try replica(
                "import", "--account", "a", "-",
                input: #"{"uniqueIdentifier": "x2", "attributes": {"title": "harbor two"}}"#
            ).status == 0)
        let search = try replica("search", "--json", "harbor")
        #expect(
            search.standardOutput.contains(#""uniqueIdentifier":"x1""#)
                && search.standardOutput.contains(#""uniqueIdentifier":"x2""#))
    }
}

/// The processes that hold files under `folder` open, and which (what `fuser -vm` would tell), for a
/// remount that the kernel refused as busy.
func openFiles(under folder: String) -> String {
    var found: [String] = []
    for process in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(process) != nil {
        let command =
            (try? String(contentsOfFile: "/proc/\(process)/cmdline", encoding: .utf8))?
            .replacingOccurrences(of: "\u{0}", with: " ") ?? "?"
        for descriptor in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/fd")) ?? [] {
            guard
                let target = try? FileManager.default.destinationOfSymbolicLink(
                    atPath: "/proc/\(process)/fd/\(descriptor)"),
                target.hasPrefix(folder)
            else { continue }
            found.append("pid \(process) (\(command.prefix(80))) fd \(descriptor) → \(target)")
        }
    }
    return found.isEmpty ? "none" : found.joined(separator: "; ")
}
