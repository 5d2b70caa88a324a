import Foundation
import ReplicaCore
import ReplicaTestSupport
import Testing

/// Every help screen, pinned in `Help/`: a change to an option, a usage line or a note shows in review as
/// a change to those files. After a change meant to alter them, write them again with
/// `REPLICA_RECORD_HELP=1 swift test --filter HelpTests`, and read the difference.
@Suite struct HelpTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Help")
    static let recording = ProcessInfo.processInfo.environment["REPLICA_RECORD_HELP"] == "1"

    @Test func everyHelpScreenIsTheOnePinned() async throws {
        let commands = try await Blocking.run { try OptionsTests.commands() }
        #expect(commands.count >= 18, "\(commands)")
        var written: Set<String> = []
        for command in [nil] + commands.map(Optional.some) {
            let help = try await ReplicaProcess.running((command.map { [$0] } ?? []) + ["--help"])
            #expect(help.status == 0 && help.standardError.isEmpty, "\(command ?? "replica"): \(help.standardError)")
            let file = Self.folder.appendingPathComponent((command ?? "replica") + ".txt")
            written.insert(file.lastPathComponent)
            if Self.recording {
                try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
                try help.standardOutput.write(to: file, atomically: true, encoding: .utf8)
                continue
            }
            let pinned = try? String(contentsOf: file, encoding: .utf8)
            #expect(
                pinned == help.standardOutput,
                """
                \(command ?? "replica")'s help is not the one pinned in \(file.path); if the change is meant, \
                run REPLICA_RECORD_HELP=1 swift test --filter HelpTests. It now reads:
                \(help.standardOutput)
                """)
        }
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: Self.folder.path))
        #expect(
            files == written,
            "help files of no command: \(files.subtracting(written).sorted()); missing: \(written.subtracting(files).sorted())"
        )
    }
}
