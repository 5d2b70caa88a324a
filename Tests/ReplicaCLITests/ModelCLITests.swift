import Foundation
import Replica
import ReplicaTestSupport
import Testing

/// What the command line does when the embedding model cannot be used — damaged, a FIFO, or a
/// `REPLICA_MODEL_DIR` naming a folder without one: it answers by the words, says why in one line on
/// standard error, exits 0, and never crashes, hangs or quietly uses another model. On both backends.
@Suite(.serialized) struct ModelCLITests {
    static let item =
        #"{"uniqueIdentifier": "cat", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "Afternoon", "textContent": "The feline dozed on the rug all afternoon.", "contentType": "public.plain-text"}}"#

    /// Runs `replica` on the store of `place` with `REPLICA_MODEL_DIR=model`, killed (and the test failed)
    /// after 120 s.
    static func replica(_ place: CLIPlace, model: String, _ arguments: [String], input: String? = nil) async throws
        -> ProcessResult
    {
        try await replica(place, environment: ["REPLICA_MODEL_DIR": model], arguments, input: input)
    }

    /// Runs `replica` on the store of `place` with `environment` (MiniLM, whose files the damages are
    /// made to, unless it names another model), killed (and the test failed) after 120 s.
    static func replica(_ place: CLIPlace, environment: [String: String], _ arguments: [String], input: String? = nil)
        async throws -> ProcessResult
    {
        try await ReplicaProcess.running(
            place.arguments + arguments, input: input,
            environment: ["REPLICA_MODEL": EmbeddingModel.miniLM.rawValue].merging(environment) { $1 }, timeout: 120)
    }

    /// The environment that has replica find `folder` where the model is installed: as
    /// `$XDG_DATA_HOME/replica/models/all-MiniLM-L6-v2`, without `REPLICA_MODEL_DIR` (moved there).
    static func installing(_ folder: URL, in scratch: TemporaryDirectory) throws -> [String: String] {
        let data = scratch.appending("data")
        let models = data.appendingPathComponent("replica/models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder, to: models.appendingPathComponent("all-MiniLM-L6-v2"))
        return ["REPLICA_MODEL_DIR": "", "XDG_DATA_HOME": data.path]
    }

    /// Lines of standard error but for the usual ones (what was imported, no results).
    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter {
            !$0.hasPrefix("replica: imported ") && $0 != "replica: no results"
        }
    }

    /// Each damage, to the model named by `REPLICA_MODEL_DIR` or (FIFOs) to the installed one:
    /// `import` exits 0 with its items indexed and one line on what went wrong with the model; `search`
    /// prints its results by the words with one such line, and exits 0; `status` says the model is damaged.
    @Test(
        arguments: [
            ModelCopy.Damage.headerLength, .dataOffsets, .hugeShape, .notANumber, .infinity, .weightsFIFO,
            .vocabularyFIFO,
        ],
        TestBackend.available)
    func aDamagedModelLeavesSearchToTheWordsWithOneWarning(_ damage: ModelCopy.Damage, _ backend: TestBackend)
        async throws
    {
        let scratch = try TemporaryDirectory()
        let folder = try ModelCopy.make(damage, in: scratch.url)
        let environment =
            damage == .weightsFIFO || damage == .vocabularyFIFO
            ? try Self.installing(folder, in: scratch) : ["REPLICA_MODEL_DIR": folder.path]
        let place = CLIPlace(directory: scratch)
        try await place.use(backend, signingIn: "a")

        let imported = try await Self.replica(
            place, environment: environment, ["import", "--account", "a", "-"], input: Self.item)
        #expect(
            imported.status == 0 && !imported.wasSignaled,
            "\(damage): import ended with \(imported.status): \(imported.standardError)")
        let importNotes = Self.lines(imported.standardError)
        #expect(importNotes.count == 1 && importNotes[0].contains("model"), "\(damage): \(importNotes)")

        let search = try await Self.replica(place, environment: environment, ["search", "feline"])
        #expect(
            search.status == 0 && !search.wasSignaled,
            "\(damage): search ended with \(search.status): \(search.standardError)")
        #expect(
            search.standardOutput.hasPrefix("cat — Afternoon\n") && !search.standardOutput.contains("meaning"),
            "\(search.standardOutput)")
        let searchNotes = Self.lines(search.standardError)
        #expect(
            searchNotes.count == 1 && searchNotes[0].contains("semantic search is off"), "\(damage): \(searchNotes)")

        // status says the model is damaged, not only its name and size as if it worked.
        let status = try await Self.replica(place, environment: environment, ["status"])
        let modelLine = Self.lines(status.standardOutput).first { $0.hasPrefix("semantic search") } ?? ""
        #expect(
            status.status == 0 && modelLine.contains("damaged") && modelLine.contains("words alone"),
            "\(damage): \(status.standardOutput)")
    }

    /// A precision `REPLICA_EMBEDDING_PRECISION` cannot use ("fp16") is said on every command, with what
    /// to write instead; search answers by the words and exits 0, where it used to turn meaning off in
    /// silence.
    @Test(arguments: TestBackend.available)
    func anUnknownPrecisionIsSaidOnEveryCommand(_ backend: TestBackend) async throws {
        let scratch = try TemporaryDirectory()
        let place = CLIPlace(directory: scratch)
        try await place.use(backend, signingIn: "a")
        // Semantic search left on (the test helper turns it off), wherever the model is or is not installed.
        let environment = ["REPLICA_EMBEDDING_PRECISION": "fp16", "REPLICA_MODEL_DIR": ""]
        let imported = try await Self.replica(
            place, environment: environment, ["import", "--account", "a", "--no-embed", "-"], input: Self.item)
        #expect(imported.status == 0, "\(imported.standardError)")
        for arguments in [["search", "feline"], ["status"]] {
            let run = try await Self.replica(place, environment: environment, arguments)
            #expect(run.status == 0 && !run.wasSignaled, "\(arguments): \(run.standardError)")
            let notes = Self.lines(run.standardError).filter { $0.contains("semantic search is off") }
            #expect(
                notes.count == 1 && notes[0].contains("fp16") && notes[0].contains("float32 or int8"),
                "\(arguments): \(run.standardError)")
        }
        let search = try await Self.replica(place, environment: environment, ["search", "feline"])
        #expect(search.standardOutput.hasPrefix("cat — Afternoon\n"), "\(search.standardOutput)")
    }

    /// `--embed-for SECONDS` starts no batch after its time: given 0, an import is searchable by its
    /// words and its item waits (said in one note; `sync --json` counts it), and a later sync embeds it.
    /// Beside `--no-embed`, or with a time that is not a number of seconds, the command is refused
    /// before it writes anything.
    @Test(arguments: TestBackend.available)
    func embeddingForATimeLeavesWhatItHadNoTimeForToTheNextCommand(_ backend: TestBackend) async throws {
        let scratch = try TemporaryDirectory()
        let place = CLIPlace(directory: scratch)
        try await place.use(backend, signingIn: "a")
        let environment = ["REPLICA_MODEL_DIR": ""]
        for wrong in [["--no-embed", "--embed-for", "5"], ["--embed-for", "soon"], ["--embed-for=-1"]] {
            let refused = try await Self.replica(
                place, environment: environment, ["import", "--account", "a"] + wrong + ["-"], input: Self.item)
            #expect(
                refused.status != 0 && refused.standardError.contains("--embed-for"),
                "\(wrong): \(refused.standardError)")
        }
        let nothing = try await Self.replica(place, environment: environment, ["search", "--lexical", "feline"])
        #expect(!nothing.standardOutput.contains("cat — "), "a refused import wrote nothing: \(nothing.standardOutput)")

        let imported = try await Self.replica(
            place, environment: environment, ["import", "--account", "a", "--embed-for", "0", "-"], input: Self.item)
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(
            Self.lines(imported.standardError) == [
                "replica: semantic search: 1 item still waits to be embedded (--embed-for's time ran out); searches find it by its words, and replica watch or the next command embeds it"
            ])
        let search = try await Self.replica(place, environment: environment, ["search", "feline"])
        #expect(search.standardOutput.hasPrefix("cat — Afternoon\n"), "\(search.standardOutput)")

        func sync(_ seconds: String) async throws -> [String: Any] {
            let run = try await Self.replica(
                place, environment: environment, ["sync", "--embed-for", seconds, "--json"])
            #expect(run.status == 0, "\(run.standardError)")
            return try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        }
        let none = try await sync("0")
        #expect(none["embedded"] as? Int == 0 && none["embedWaiting"] as? Int == 1, "\(none)")
        let all = try await sync("600")
        #expect(all["embedded"] as? Int == 1 && all["embedWaiting"] as? Int == 0, "\(all)")
        let byMeaning = try await Self.replica(
            place, environment: environment, ["search", "--semantic", "cat sleeping on a carpet"])
        #expect(byMeaning.standardOutput.hasPrefix("cat — Afternoon\n"), "\(byMeaning.standardOutput)")
    }

    /// `replica watch` with a FIFO for the installed model's weights says the model failed, and stops
    /// at SIGTERM.
    @Test(arguments: TestBackend.available)
    func watchWithAFIFOForWeightsWarnsAndStopsAtSIGTERM(_ backend: TestBackend) async throws {
        let scratch = try TemporaryDirectory()
        let environment = try Self.installing(try ModelCopy.make(.weightsFIFO, in: scratch.url), in: scratch)
        let place = CLIPlace(directory: scratch)
        try await place.use(backend, signingIn: "a")
        let imported = try await Self.replica(
            place, model: "off", ["import", "--account", "a", "--no-embed", "-"], input: Self.item)
        #expect(imported.status == 0, "\(imported.standardError)")

        let watcher = try RunningProcess(
            replica: place.arguments + ["watch"],
            environment: environment.merging(["REPLICA_MODEL": EmbeddingModel.miniLM.rawValue]) { $1 })
        let warned = await eventually { watcher.standardError.contains("embedding for semantic search failed") }
        #expect(warned, "\(watcher.standardError)")
        watcher.signal(SIGTERM)
        let status = await watcher.exit(within: 60)
        #expect(status == 0, "watch did not stop at SIGTERM: \(watcher.standardError)")
    }

    /// `REPLICA_MODEL_DIR` naming a folder that cannot be used is said, with the folder and why, on each
    /// command that would use the model: no other model is used in its place, and search answers by the words.
    @Test(arguments: ["missing", "empty", "loop", "no vocabulary"], TestBackend.available)
    func aNamedModelFolderThatCannotBeUsedIsSaidNotSilentlyReplaced(_ kind: String, _ backend: TestBackend) async throws
    {
        let scratch = try TemporaryDirectory()
        let model = scratch.path + "/model"
        let reason: String
        switch kind {
        case "missing":
            reason = "does not exist"
        case "empty":
            try FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: false)
            reason = "has no model.safetensors"
        case "loop":
            try FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(
                atPath: model + "/model.safetensors", withDestinationPath: "model.safetensors")
            try FileManager.default.copyItem(
                atPath: try #require(ModelCopy.installed).path + "/vocab.txt", toPath: model + "/vocab.txt")
            reason = "loop of symbolic links"
        default:
            try FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: false)
            try FileManager.default.copyItem(
                atPath: try #require(ModelCopy.installed).path + "/model.safetensors",
                toPath: model + "/model.safetensors")
            reason = "has no vocab.txt"
        }
        let place = CLIPlace(directory: scratch)
        try await place.use(backend, signingIn: "a")

        let imported = try await Self.replica(place, model: model, ["import", "--account", "a", "-"], input: Self.item)
        let importNotes = Self.lines(imported.standardError)
        #expect(imported.status == 0 && importNotes.count == 1, "\(kind): \(importNotes)")
        #expect(
            importNotes.first?.contains(model) == true && importNotes.first?.contains(reason) == true,
            "\(kind): \(importNotes)")

        // By meaning alone, the installed model would find the cat: nothing is found, and it says why.
        let search = try await Self.replica(
            place, model: model, ["search", "--semantic", "cat", "sleeping", "on", "a", "carpet"])
        let searchNotes = Self.lines(search.standardError)
        #expect(search.status == 0 && search.standardOutput.isEmpty, "\(kind): \(search.standardOutput)")
        #expect(
            searchNotes.count == 1 && searchNotes.first?.contains(model) == true
                && searchNotes.first?.contains(reason) == true,
            "\(kind): \(searchNotes)")

        let status = try await Self.replica(place, model: model, ["status"])
        #expect(
            status.standardOutput.contains("semantic search is off") && status.standardOutput.contains(model),
            "\(kind): \(status.standardOutput)")
        #expect(!status.standardOutput.contains("vectors for 1 items"), "nothing was embedded by another model")
    }

    /// The model is chosen by `REPLICA_MODEL`, else the configuration file's `model`, else the default;
    /// `status` says which and what chose it; a name of no model is refused with the names there are;
    /// the multilingual model finds a Chinese item by an English question.
    @Test func theModelIsChosenByNameAndTheMultilingualOneReadsOtherLanguages() async throws {
        let scratch = try TemporaryDirectory()
        let place = CLIPlace(directory: scratch)
        try await place.use(.sqlite, signingIn: "a")
        // The installed models (the tests turn semantic search off unless told otherwise).
        let multilingual = ReplicaProcess.withModel.merging(["REPLICA_MODEL": "multilingual-e5-small"]) { $1 }
        let items = [
            #"{"uniqueIdentifier": "beijing", "attributes": {"textContent": "北京是中华人民共和国的首都。"}}"#,
            #"{"uniqueIdentifier": "houses", "attributes": {"textContent": "Die Häuser wurden im Winter renoviert."}}"#,
        ]
        let imported = try await Self.replica(
            place, environment: multilingual, ["import", "--account", "a", "-"], input: items.joined(separator: "\n"))
        #expect(imported.status == 0, "\(imported.standardError)")
        let status = try await Self.replica(place, environment: multilingual, ["status"])
        #expect(
            status.standardOutput.contains("semantic search: intfloat/multilingual-e5-small")
                && status.standardOutput.contains("(chosen by REPLICA_MODEL)")
                && status.standardOutput.contains("vectors for 2 items"), "\(status.standardOutput)")
        let found = try await Self.replica(
            place, environment: multilingual,
            ["search", "--semantic", "--limit", "1", "What", "is", "the", "capital", "of", "China?"])
        #expect(found.standardOutput.hasPrefix("beijing"), "\(found.standardOutput)")

        // The configuration file's model, when REPLICA_MODEL is not set.
        let configuration = scratch.appending("config.json")
        try Data(#"{"model": "all-MiniLM-L6-v2"}"#.utf8).write(to: configuration)
        let unset = ReplicaProcess.withModel.merging(["REPLICA_MODEL": ""]) { $1 }
        let configured = try await Self.replica(
            place, environment: unset.merging(["REPLICA_CONFIG": configuration.path]) { $1 }, ["status"])
        #expect(
            configured.standardOutput.contains("all-MiniLM-L6-v2")
                && configured.standardOutput.contains("(chosen by the configuration file's model)"),
            "\(configured.standardOutput)")
        let byDefault = try await Self.replica(place, environment: unset, ["status"])
        #expect(
            byDefault.standardOutput.contains("multilingual-e5-small")
                && byDefault.standardOutput.contains("(chosen by the default)"), "\(byDefault.standardOutput)")

        let unknown = try await Self.replica(
            place, environment: ReplicaProcess.withModel.merging(["REPLICA_MODEL": "e5-large"]) { $1 },
            ["search", "capital"])
        let notes = Self.lines(unknown.standardError)
        #expect(
            notes.count == 1 && notes[0].contains("no embedding model 'e5-large'")
                && notes[0].contains("multilingual-e5-small"), "\(notes)")
    }
}
