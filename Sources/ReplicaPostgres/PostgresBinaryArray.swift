/// A one-dimensional array parameter built in PostgreSQL's binary format (what `array_recv` reads), so
/// that the server copies its elements instead of parsing a text literal: no quotes to find, no escapes
/// to undo, no numbers to convert. Many rows sent as one array per column (`unnest($1::text[], …)`)
/// cost the server about what the same rows cost through `COPY`.
///
/// The statement must give the parameter its array type (`$1::text[]`, `$2::float8[]`, `$3::tsvector[]`):
/// the server reads the bytes with that type's receive function and refuses an element type other than
/// the one the array says it holds.
///
/// For example:
/// ```swift
/// var titles = PostgresBinaryArray(of: .text)
/// titles.append("Launch plan")
/// titles.append(nil as String?)
/// var sizes = PostgresBinaryArray(of: .float8)
/// sizes.append(2.5)
/// sizes.append(nil as Double?)
/// let parameters = [titles.value, sizes.value]   // for `unnest($1::text[], $2::float8[])`
/// ```
public struct PostgresBinaryArray: Sendable {
    /// An element type: its name and the object ID the server checks the array's header against.
    public struct ElementType: Sendable, Hashable {
        /// The type's name, as a statement casts to its array (`text` for `text[]`).
        public let name: String
        /// The type's OID in `pg_type`, fixed for the built-in types.
        public let oid: UInt32

        public static let text = ElementType(name: "text", oid: 25)
        public static let int4 = ElementType(name: "integer", oid: 23)
        public static let int8 = ElementType(name: "bigint", oid: 20)
        public static let float8 = ElementType(name: "float8", oid: 701)
        public static let tsvector = ElementType(name: "tsvector", oid: 3614)
        public static let bytea = ElementType(name: "bytea", oid: 17)
    }

    /// The type of every element.
    public let elementType: ElementType
    /// The elements so far, each as its 4-byte length (-1 for NULL) and its bytes.
    private var elements: [UInt8] = []
    /// How many elements were appended.
    public private(set) var count = 0
    private var holdsNull = false

    /// An empty array of `elementType`.
    public init(of elementType: ElementType, reservingBytes capacity: Int = 0) {
        self.elementType = elementType
        elements.reserveCapacity(capacity)
    }

    /// The array as a parameter (binary format).
    public var value: PostgresValue {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + elements.count)
        Self.append(Int32(count == 0 ? 0 : 1), to: &bytes)  // dimensions: none for an empty array
        Self.append(Int32(holdsNull ? 1 : 0), to: &bytes)
        Self.append(UInt32(elementType.oid), to: &bytes)
        if count > 0 {
            Self.append(Int32(count), to: &bytes)  // the dimension's length
            Self.append(Int32(1), to: &bytes)  // and its lower bound
        }
        bytes += elements
        return .bytes(bytes)
    }

    /// Appends NULL.
    public mutating func appendNull() {
        Self.append(Int32(-1), to: &elements)
        holdsNull = true
        count += 1
    }

    /// Appends an element whose binary form `write` appends to the buffer it is given (the length
    /// before it is filled in afterwards).
    public mutating func appendElement(_ write: (inout [UInt8]) -> Void) {
        let start = elements.count
        Self.append(Int32(0), to: &elements)
        write(&elements)
        let length = UInt32(elements.count - start - 4)
        elements[start] = UInt8(truncatingIfNeeded: length >> 24)
        elements[start + 1] = UInt8(truncatingIfNeeded: length >> 16)
        elements[start + 2] = UInt8(truncatingIfNeeded: length >> 8)
        elements[start + 3] = UInt8(truncatingIfNeeded: length)
        count += 1
    }

    /// Appends a text element (U+0000 escaped as ``PostgresValue/text(_:)`` escapes it), or NULL.
    public mutating func append(_ text: String?) {
        precondition(elementType == .text, "a text element in an array of \(elementType.name)")
        guard let text else { return appendNull() }
        appendElement { bytes in
            if let escaped = PostgresValue.escapedUTF8(text) { bytes += escaped } else { bytes += text.utf8 }
        }
    }

    /// Appends a `float8` element, or NULL.
    public mutating func append(_ number: Double?) {
        precondition(elementType == .float8, "a float8 element in an array of \(elementType.name)")
        guard let number else { return appendNull() }
        appendElement { Self.append(number.bitPattern, to: &$0) }
    }

    /// Appends an `integer` or `bigint` element (as the array's type is), or NULL.
    public mutating func append(_ number: Int64?) {
        guard let number else { return appendNull() }
        switch elementType {
        case .int4:
            precondition(Int64(Int32.min)...Int64(Int32.max) ~= number, "\(number) is not an integer (int4)")
            appendElement { Self.append(Int32(number), to: &$0) }
        case .int8:
            appendElement { Self.append(number, to: &$0) }
        default:
            preconditionFailure("an integer element in an array of \(elementType.name)")
        }
    }

    /// Appends an element already in its type's binary format (a `tsvector` from
    /// ``PostgresTSVector``, say; a `bytea`'s bytes as they are).
    public mutating func append(binary: [UInt8]) {
        appendElement { $0 += binary }
    }

    // MARK: Network byte order

    /// Appends a number big-endian, as PostgreSQL's binary formats hold them.
    @inline(__always)
    static func append<Number: FixedWidthInteger>(_ number: Number, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: number.bigEndian) { bytes += $0 }
    }
}
