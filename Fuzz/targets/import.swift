// An import line: SearchableItem(json:) and validate() never crash; a refusal is a ReplicaError.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self),
        let json = try? JSON.parse(text)
    else { return 0 }
    do {
        let item = try SearchableItem(json: json)
        try item.validate()
        _ = item.attributeSet.approximateByteCount
    } catch is ReplicaError {
    } catch {
        fatalError("an import line failed with something other than a ReplicaError: \(error)")
    }
    return 0
}
