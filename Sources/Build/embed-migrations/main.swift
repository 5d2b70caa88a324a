// Turns migrations/<kind>/NNNN-name.sql into Swift source, so the schema ships inside the library
// instead of beside it. Run by the EmbedMigrations build plugin; not part of the product.
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 4, ["sqlite", "standalone"].contains(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: embed-migrations MIGRATIONS_DIR OUTPUT.swift sqlite|standalone\n".utf8))
    exit(2)
}
let root = URL(fileURLWithPath: arguments[1])
let output = URL(fileURLWithPath: arguments[2])
let fileManager = FileManager.default

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("embed-migrations: error: \(message)\n".utf8))
    exit(1)
}

/// A raw string literal delimiter that the text cannot close early.
func rawLiteral(_ text: String) -> String {
    var hashes = "#"
    while text.contains("\"\"\"" + hashes) || text.contains("\"" + hashes) { hashes += "#" }
    return hashes + "\"\"\"\n" + text + (text.hasSuffix("\n") ? "" : "\n") + "\"\"\"" + hashes
}

// With `sqlite`, the steps are ReplicaSQLite's `Migration`, which its migrator runs; `standalone` (a
// target without SQLite) declares a `Migration` of the same shape.
var swift =
    arguments[3] == "sqlite"
    ? """
    // Generated from migrations/ by embed-migrations at build time; edit the .sql files instead.
    import ReplicaSQLite


    """
    : """
    // Generated from migrations/ by embed-migrations at build time; edit the .sql files instead.

    /// One numbered step of a schema, as it stands in `migrations/<kind>/NNNN-name.sql`.
    struct Migration: Sendable, Equatable {
        let version: Int
        let name: String
        let sql: String
    }


    """
swift += """
    enum EmbeddedMigrations {

    """
let kinds =
    (try? fileManager.contentsOfDirectory(atPath: root.path))?.filter {
        var isDirectory: ObjCBool = false
        return fileManager.fileExists(atPath: root.appendingPathComponent($0).path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }.sorted() ?? []
for kind in kinds {
    guard kind.allSatisfy({ $0.isLetter || $0.isNumber }) else {
        fail("migration folder '\(kind)' must be a plain word")
    }
    let files = try fileManager.contentsOfDirectory(atPath: root.appendingPathComponent(kind).path)
        .filter { $0.hasSuffix(".sql") }.sorted()
    var versions = Set<Int>()
    swift += "    static let \(kind): [Migration] = [\n"
    for file in files {
        let stem = file.dropLast(4)
        let parts = stem.split(separator: "-", maxSplits: 1)
        guard parts.count == 2, let version = Int(parts[0]), version > 0 else {
            fail("migrations/\(kind)/\(file): name it NNNN-description.sql (a positive number, a dash, a name)")
        }
        guard versions.insert(version).inserted else { fail("migrations/\(kind): version \(version) appears twice") }
        let text = try String(
            contentsOf: root.appendingPathComponent(kind).appendingPathComponent(file), encoding: .utf8)
        swift += "        Migration(version: \(version), name: \"\(parts[1])\", sql: \(rawLiteral(text))),\n"
    }
    swift += "    ]\n"
}
swift += "}\n"
let existing = try? String(contentsOf: output, encoding: .utf8)
if existing != swift {
    try swift.write(to: output, atomically: true, encoding: .utf8)
}
