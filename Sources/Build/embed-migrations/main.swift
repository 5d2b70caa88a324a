// Turns migrations/<kind>/NNNN-name.sql into Swift source, so the schema ships inside the library
// instead of beside it. Run by the EmbedMigrations build plugin; not part of the product.
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: embed-migrations MIGRATIONS_DIR OUTPUT.swift\n".utf8))
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

var swift = """
    // Generated from migrations/ by embed-migrations at build time; edit the .sql files instead.
    import ReplicaSQLite

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
