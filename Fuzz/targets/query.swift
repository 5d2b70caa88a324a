import CSQLite

// Typed query text: FTSPattern never crashes, and every pattern it builds (ranked, every word, near,
// one term) is accepted by FTS5 itself — typed text never reaches the engine's syntax.
nonisolated(unsafe) let database: OpaquePointer = {
    var handle: OpaquePointer?
    sqlite3_open(":memory:", &handle)
    sqlite3_exec(
        handle,
        "CREATE VIRTUAL TABLE items_text USING fts5(title, keywords, people, description, body, tokenize = 'porter unicode61 remove_diacritics 2'); INSERT INTO items_text VALUES ('a', 'b', 'c', 'd', 'the launch risk')",
        nil, nil, nil)
    return handle!
}()

func accepted(_ expression: String) -> Bool {
    var statement: OpaquePointer?
    guard
        sqlite3_prepare_v2(database, "SELECT rowid FROM items_text WHERE items_text MATCH ?", -1, &statement, nil)
            == SQLITE_OK
    else { return false }
    defer { sqlite3_finalize(statement) }
    sqlite3_bind_text(statement, 1, expression, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    var code = sqlite3_step(statement)
    while code == SQLITE_ROW { code = sqlite3_step(statement) }
    return code == SQLITE_DONE
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else { return 0 }
    for all in [false, true] {
        guard let pattern = try? FTSPattern(text: text, requiringAll: all) else { continue }
        var expressions = [pattern.matchExpression] + pattern.meaningfulTerms.map(\.expression)
        if let near = pattern.nearExpression { expressions.append(near) }
        for expression in expressions where !accepted(expression) {
            fatalError("FTS5 refused a pattern built from typed text: \(expression.debugDescription)")
        }
    }
    return 0
}
