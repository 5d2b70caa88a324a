// swift-tools-version: 6.0
import PackageDescription

// replica: local, account-scoped search indexes kept fresh, and a search tool for language models.
// No package dependencies: system libraries only (SQLite; later libgit2), as the project promises.
let package = Package(
    name: "replica",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Replica", targets: ["Replica"]),
        // The store in a PostgreSQL database (`Store.Database.postgres(url:)`) and followed tables there:
        // a library of its own, so an app on SQLite files alone does not link libpq.
        .library(name: "ReplicaPostgresHome", targets: ["ReplicaPostgresHome"]),
        // The built-in sources, for hosts that run them in-process.
        .library(name: "ReplicaFileTree", targets: ["ReplicaFileTree"]),
        .library(name: "ReplicaGit", targets: ["ReplicaGit"]),
        .library(name: "ReplicaExec", targets: ["ReplicaExec"]),
        // The SQLite layer on its own, for the benchmark's raw-FTS5 baseline.
        .library(name: "ReplicaSQLite", targets: ["ReplicaSQLite"]),
        // The PostgreSQL client layer on its own (libpq), for the benchmark's raw-PostgreSQL baseline.
        .library(name: "ReplicaPostgres", targets: ["ReplicaPostgres"]),
        .executable(name: "replica", targets: ["ReplicaCLI"]),
    ],
    targets: [
        // System library shims: a module map and a header, nothing else.
        .systemLibrary(
            name: "CGit2",
            path: "Sources/CGit2",
            pkgConfig: "libgit2",
            providers: [.apt(["libgit2-dev"])]),
        // OpenBLAS's CBLAS, for the embedding model's matrix products.
        .systemLibrary(
            name: "COpenBLAS",
            path: "Sources/COpenBLAS",
            pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev"])]),
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),

        // libpq, PostgreSQL's client library (Debian: libpq-dev; its header is in /usr/include/postgresql).
        .systemLibrary(
            name: "CPostgres",
            path: "Sources/CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),

        // The SQLite wrapper and migration runner: the only importer of CSQLite (it registers the text
        // analyzer of CAnalyzer as FTS5's tokenizer `replica` on each connection).
        .target(name: "ReplicaSQLite", dependencies: ["CSQLite", "CAnalyzer"]),

        // The PostgreSQL client: connections, bound parameters, prepared statements, COPY, transactions
        // retried on serialization failures, a pool, errors in words. The only importer of CPostgres.
        .target(name: "ReplicaPostgres", dependencies: ["CPostgres"]),

        // The vector scan of semantic search and the encoder's int8 matrix products in C, which can choose
        // AVX2 at run time (Swift builds for SSE2).
        .target(name: "CVectorKernels"),

        // Starting child processes in C: what runs between fork and exec may only make system calls
        // (a supervisor that ends the child with this process, its process group, its parent-death
        // signal), and pipe2, which Swift's Glibc module leaves out.
        .target(name: "CSpawn", cSettings: [.define("_GNU_SOURCE")]),

        // Values every layer shares: JSON, errors, dates, line reading, escaping for display.
        .target(name: "ReplicaCore"),

        // The text analyzer on ICU (libicu-dev), in C: ICU's C API names its functions by its version,
        // which Swift cannot call through the header's macros. Every script's words, folded, stemmed by
        // Snowball (libstemmer-dev); a text's language by CLD2 (libcld2-dev, C++ behind a C function),
        // with its full tables (libcld2_full, linked first so that its tables are the ones CLD2's code
        // reads: the small ones take most Spanish sentences for Galician); also FTS5's tokenizer
        // `replica` (SQLite's header and allocator).
        .target(
            name: "CAnalyzer",
            linkerSettings: [
                .linkedLibrary("icuuc"), .linkedLibrary("icui18n"), .linkedLibrary("stemmer"),
                .linkedLibrary("cld2_full"), .linkedLibrary("cld2"), .linkedLibrary("sqlite3"),
            ]),
        .target(name: "ReplicaText", dependencies: ["CAnalyzer"]),

        // The index above the seam: items, searches, ranking and the rules every backend shares, with the
        // storage protocols a backend implements. It depends on no database library.
        .target(name: "ReplicaIndex", dependencies: ["ReplicaCore", "ReplicaText", "CVectorKernels"]),

        // The index kept in a SQLite file (the embedded default), behind ReplicaIndex's seam: its storage,
        // reader and writer, the ranking lists on FTS5, the migrations of migrations/index/.
        .target(
            name: "ReplicaSQLiteStore",
            dependencies: ["ReplicaCore", "ReplicaIndex", "ReplicaSQLite", "ReplicaText", "CVectorKernels"],
            plugins: ["EmbedMigrations"]),

        // The sentence-embedding model run in-process (all-MiniLM-L6-v2: WordPiece, a BERT encoder on
        // OpenBLAS), for semantic search. Its weights come from a package the set-up installs.
        .target(
            name: "ReplicaEmbedding", dependencies: ["ReplicaCore", "ReplicaIndex", "COpenBLAS", "CVectorKernels"]),

        // The library app storage layers import: accounts and the store, records, projection, the source
        // contract, the search tool. It re-exports ReplicaIndex, ReplicaCore and ReplicaEmbedding.
        .target(
            name: "Replica",
            dependencies: [
                "ReplicaCore", "ReplicaIndex", "ReplicaEmbedding", "ReplicaSQLite", "ReplicaSQLiteStore", "ReplicaText",
                "CSpawn",
            ],
            plugins: ["EmbedMigrations"]),

        // The library's PostgreSQL home: `Store.Database.postgres(url:)`, the catalog and record stores there,
        // a standby's reads, and followed tables in an app's PostgreSQL database.
        .target(
            name: "ReplicaPostgresHome",
            dependencies: ["Replica", "ReplicaCore", "ReplicaIndex", "ReplicaPostgres", "ReplicaPostgresStore"]),

        // Sources (plugins): they depend on the library's source contract; the library never on them.
        .target(name: "ReplicaFileTree", dependencies: ["Replica"], path: "Plugins/FileTree"),
        .target(name: "ReplicaGit", dependencies: ["Replica", "ReplicaFileTree", "CGit2"], path: "Plugins/Git"),
        .target(name: "ReplicaExec", dependencies: ["Replica"], path: "Plugins/Exec", exclude: ["examples"]),

        // replica's store on PostgreSQL: the schema of migrations/postgres/, with row-level security and a
        // partition per account, and an index kept there behind ReplicaIndex's seam. The library's catalog
        // and record store on PostgreSQL build on it (Sources/Replica/Storage/Postgres).
        .target(
            name: "ReplicaPostgresStore",
            dependencies: ["ReplicaCore", "ReplicaIndex", "ReplicaPostgres", "ReplicaText"],
            plugins: ["EmbedMigrations"]),

        // The command-line tool.
        .executableTarget(
            name: "ReplicaCLI",
            dependencies: [
                "Replica", "ReplicaEmbedding", "ReplicaFileTree", "ReplicaGit", "ReplicaExec", "ReplicaPostgresHome",
            ]),

        // Build-time only: compiles migrations/*.sql into the library.
        .executableTarget(name: "embed-migrations", path: "Sources/Build/embed-migrations"),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["embed-migrations"],
            path: "Sources/Build/EmbedMigrations"),

        // A test target per product (SQLite, PostgreSQL, the PostgreSQL store, each source, the CLI);
        // ReplicaTests covers the library and the modules inside it (core, index, text, embedding), in a
        // folder per area. Shared helpers live in a non-product target.
        .target(
            name: "ReplicaTestSupport",
            dependencies: [
                "Replica", "ReplicaCore", "ReplicaIndex", "ReplicaText", "ReplicaSQLite", "ReplicaPostgres",
                "ReplicaPostgresStore", "ReplicaPostgresHome",
            ],
            path: "Tests/ReplicaTestSupport"),
        .testTarget(name: "ReplicaSQLiteTests", dependencies: ["ReplicaSQLite", "ReplicaTestSupport"]),
        .testTarget(name: "ReplicaPostgresTests", dependencies: ["ReplicaPostgres", "ReplicaTestSupport"]),
        .testTarget(
            name: "ReplicaPostgresStoreTests",
            dependencies: [
                "ReplicaPostgresStore", "ReplicaPostgres", "ReplicaIndex", "ReplicaCore", "ReplicaTestSupport",
                "ReplicaSQLite", "ReplicaSQLiteStore",
            ]),
        .testTarget(
            name: "ReplicaTests",
            dependencies: [
                "Replica", "ReplicaIndex", "ReplicaCore", "ReplicaEmbedding", "ReplicaSQLite", "ReplicaSQLiteStore",
                "ReplicaPostgres", "ReplicaPostgresStore", "ReplicaPostgresHome", "CVectorKernels", "ReplicaText",
                "ReplicaTestSupport",
            ]),
        .testTarget(
            name: "ReplicaCLITests",
            dependencies: [
                "ReplicaCLI", "Replica", "ReplicaTestSupport", "ReplicaIndex", "ReplicaCore", "ReplicaSQLite",
                "ReplicaText", "ReplicaPostgresHome",
            ]),
        .testTarget(
            name: "ReplicaFileTreeTests",
            dependencies: [
                "ReplicaFileTree", "Replica", "ReplicaTestSupport", "ReplicaIndex", "ReplicaCore", "ReplicaEmbedding",
                "ReplicaSQLite", "ReplicaPostgres", "ReplicaText",
            ]),
        .testTarget(
            name: "ReplicaGitTests",
            dependencies: [
                "ReplicaGit", "ReplicaFileTree", "Replica", "ReplicaTestSupport", "ReplicaIndex", "ReplicaCore",
            ]),
        .testTarget(
            name: "ReplicaExecTests",
            dependencies: [
                "ReplicaExec", "Replica", "ReplicaTestSupport", "ReplicaIndex", "ReplicaCore", "ReplicaSQLite",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// Every Swift target names its existential types (`any Protocol`) and makes an import internal unless it says
// `public` or `package` (what a module shows of its dependencies is said where it is shown), as Swift 7 will ask.
for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("InternalImportsByDefault"),
        ]
}
