import Foundation
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// Arrays and `tsvector`s built in the binary format read back on the server as the same values sent
/// as text would.
@Suite(
    .enabled(
        if: PostgresTestServer.isEnabled,
        "PostgreSQL is not installed here or could not start (the reason is on standard error); CI=true runs these tests regardless"
    ))
struct PostgresBinaryArrayTests {
    let database: PostgresTestDatabase
    let connection: PostgresConnection

    init() throws {
        database = try PostgresTestServer.makeDatabase()
        connection = try PostgresConnection(url: database.url)
    }

    static let texts: [String?] = [
        "", "plain", nil, "été à Zürich — 日本語 🙂", "'quotes' and \"double\" {braces}, commas", "back\\slash \\N",
        "nul \u{0} inside", "noncharacter \u{FFFF} inside", "NULL", String(repeating: "long ", count: 5_000),
    ]

    @Test func textArraysReadBackElementByElement() throws {
        var array = PostgresBinaryArray(of: .text)
        for text in Self.texts { array.append(text) }
        let result = try connection.execute(
            "SELECT element, ordinal FROM unnest($1::text[]) WITH ORDINALITY AS u(element, ordinal) ORDER BY ordinal",
            [array.value])
        #expect(result.rowCount == Self.texts.count)
        for (index, text) in Self.texts.enumerated() {
            #expect(result.string(index, 0) == text, "element \(index + 1)")
        }
        // The same bytes as the text sent as a parameter of its own.
        let stored = try connection.execute(
            "SELECT ($1::text[])[7] = $2::text, ($1::text[])[8] = $3::text",
            [array.value, .text(Self.texts[6]!), .text(Self.texts[7]!)])
        #expect(stored.bool(0, 0) == true && stored.bool(0, 1) == true)
    }

    @Test func numberArraysKeepEveryValueExactly() throws {
        let doubles: [Double?] = [
            0, -0.0, 1.0 / 3, -1.5e300, .leastNonzeroMagnitude, .infinity, -.infinity, nil, 1_800_000_000.123456,
        ]
        var floats = PostgresBinaryArray(of: .float8)
        for number in doubles { floats.append(number) }
        var integers = PostgresBinaryArray(of: .int4)
        var bigs = PostgresBinaryArray(of: .int8)
        let numbers: [Int64?] = [0, -1, Int64(Int32.max), Int64(Int32.min), nil, 42]
        for number in numbers {
            integers.append(number)
            bigs.append(number.map { $0 * 1_000_000_007 })
        }
        let read = try connection.execute(
            "SELECT f FROM unnest($1::float8[]) WITH ORDINALITY AS u(f, o) ORDER BY o", [floats.value])
        #expect((0..<read.rowCount).map { read.double($0, 0) } == doubles)
        #expect(read.double(1, 0)?.sign == .minus, "-0.0 keeps its sign")
        let ints = try connection.execute(
            "SELECT i, b FROM unnest($1::integer[], $2::bigint[]) WITH ORDINALITY AS u(i, b, o) ORDER BY o",
            [integers.value, bigs.value])
        #expect((0..<ints.rowCount).map { ints.int($0, 0) } == numbers)
        #expect((0..<ints.rowCount).map { ints.int($0, 1) } == numbers.map { $0.map { $0 * 1_000_000_007 } })
    }

    @Test func emptyArraysAndArraysOfNullsAreWhatTheySay() throws {
        let empty = PostgresBinaryArray(of: .text)
        var nulls = PostgresBinaryArray(of: .float8)
        nulls.append(nil as Double?)
        nulls.append(nil as Double?)
        let result = try connection.execute(
            "SELECT cardinality($1::text[]), cardinality($2::float8[]), array_position($2::float8[], NULL)",
            [empty.value, nulls.value])
        #expect(result.int(0, 0) == 0 && result.int(0, 1) == 2 && result.int(0, 2) == 1)
    }

    @Test func anArrayOfAnotherElementTypeIsRefusedInWords() throws {
        var texts = PostgresBinaryArray(of: .text)
        texts.append("a")
        let error = postgresError { try connection.execute("SELECT $1::float8[]", [texts.value]) }
        #expect(error != nil)
    }

    @Test func tsvectorsReadBackAsTheirTextLiteralsDo() throws {
        typealias Weight = PostgresTSVector.Weight
        let entries: [(lexeme: String, positions: [(Int, Weight)])] = [
            ("zebra", [(3, .d), (70, .a)]), ("apple", [(1, .a)]), ("it's", [(2, .b), (9, .c)]),
            ("back\\slash", [(4, .d)]),
            ("日本", [(5, .a)]), ("été", [(6, .d)]), ("apples", [(7, .d)]), ("nul\u{0}", [(8, .b)]),
            ("late", [(16_000, .d), (16_383, .c)]),
        ]
        let binary = PostgresTSVector.binary(
            entries.map { entry in
                (
                    lexeme: PostgresValue.storedUTF8(entry.lexeme),
                    positions: entry.positions.map { PostgresTSVector.position($0.0, weight: $0.1) }
                )
            })
        let literal = entries.map { entry in
            "'" + entry.lexeme.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''")
                + "':"
                + entry.positions.map { "\($0.0)\(["D", "C", "B", "A"][Int($0.1.rawValue)])" }.joined(separator: ",")
        }.joined(separator: " ")
        let result = try connection.execute(
            "SELECT $1::tsvector = $2::tsvector, $1::tsvector::text, $2::tsvector::text",
            [.bytes(binary), .text(literal)])
        #expect(
            result.bool(0, 0) == true,
            "binary \(result.string(0, 1) ?? "?") against literal \(result.string(0, 2) ?? "?")")
        #expect(result.string(0, 1) == result.string(0, 2))
        // In an array too.
        var array = PostgresBinaryArray(of: .tsvector)
        array.append(binary: binary)
        array.appendNull()
        let element = try connection.execute(
            "SELECT ($1::tsvector[])[1] = $2::tsvector, ($1::tsvector[])[2] IS NULL", [array.value, .text(literal)])
        #expect(element.bool(0, 0) == true && element.bool(0, 1) == true)
    }
}
