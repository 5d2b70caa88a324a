import Foundation

// Core Spotlight query strings: the parser never crashes or recurses without bound; what it accepts
// writes back (`description`) as a string that parses to the same predicate; and checking the predicate
// against items never crashes, whatever the wildcards and modifiers.
let now = Date(timeIntervalSince1970: 1_800_000_000)
let samples: [AttributeSet] = {
    var full = AttributeSet(contentType: .plainText)
    full.title = "MyWindow — Café *notes* ?"
    full.textContent = "the launch risk\nis the supplier's, paris-france.jpg"
    full.keywords = ["alpha", "", "İstanbul"]
    full.authors = [Person(displayName: "Ada Lovelace", handles: ["ada@example.com"])]
    full.rating = 3
    full.contentModificationDate = now
    full[AttributeKey("com.example.flag")] = .bool(true)
    full.thumbnailData = Data([1, 2, 3])
    return [AttributeSet(), full]
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self),
        let predicate = try? QueryPredicate(queryString: text)
    else { return 0 }
    let written = predicate.description
    guard let again = try? QueryPredicate(queryString: written), again == predicate else {
        fatalError("a parsed query string does not parse back from its description: \(written.debugDescription)")
    }
    for zone in [TimeZone(identifier: "UTC")!, TimeZone(identifier: "Pacific/Kiritimati")!] {
        let matcher = PredicateMatcher(predicate, now: now, timeZone: zone)
        for sample in samples { _ = matcher.matches(sample) }
    }
    return 0
}
