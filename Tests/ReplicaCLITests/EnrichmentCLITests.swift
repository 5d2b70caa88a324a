import Foundation
import ReplicaTestSupport
import Testing

@testable import ReplicaCore

/// The configuration file's `enrichment` setting, as the command line reads it.
@Suite struct EnrichmentCLITests {
    let directory: TemporaryDirectory
    let place: CLIPlace
    var store: String { place.store }

    init() throws {
        directory = try TemporaryDirectory()
        place = CLIPlace(directory: directory)
    }

    @discardableResult
    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: String..., input: String? = nil) throws -> ProcessResult {
        try ReplicaProcess.run(place.arguments + arguments, input: input)
    }

    func mail(_ id: String, to recipient: String) -> String {
        let text =
            String(repeating: "The launch moves to Friday because the supplier is late. ", count: 5)
            + "Can you confirm?"
        return
            #"{"uniqueIdentifier": "\#(id)", "domainIdentifier": "thread.\#(id)", "updateListenerOptions": ["summarization", "priority"], "attributes": {"contentType": "public.email-message", "title": "Launch", "textContent": "\#(text)", "contentCreationDate": "\#(ISO8601.string(from: Date()))", "authorNames": ["Bob"], "primaryRecipients": ["\#(recipient)"]}}"#
    }

    @Test(arguments: TestBackend.available)
    func theConfigurationChoosesAProgramForSummariesAndSaysWhoIsMe(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let script = directory.path + "/summarize.py"
        try """
        import json, sys
        sys.stdin.readline()
        for line in sys.stdin:
            request = json.loads(line)
            if request["type"] == "stop": break
            print(json.dumps({"type": "summarized", "request": request["request"], "summary": "from the program, me = %s" % request["thread"]["me"]}), flush=True)
        """.write(toFile: script, atomically: true, encoding: .utf8)
        try """
        // The summarizer is a program; priority is off; Ada is "me" in account a.
        {"enrichment": {"summarizer": ["python3", "\(script)"], "priority": "off", "timeout": "30s",
                        "me": {"a": ["ada@example.com"]}}}
        """.write(toFile: store + "/config.json", atomically: true, encoding: .utf8)
        #expect(try replica("import", "--account", "a", "-", input: mail("m1", to: "ada@example.com")).status == 0)
        let attributes = try JSON.parse(replica("get", "--account", "a", "--json", "m1").standardOutput)["items"]?
            .arrayValue?.first?["attributes"]
        #expect(attributes?["textContentSummary"]?.stringValue == #"from the program, me = ['ada@example.com']"#)
        #expect(attributes?["isPriority"] == nil, "priority is off")

        // The built-in classifier hears who "me" is: a mail sent to Ada directly rises.
        try #"{"enrichment": {"me": {"a": ["ada@example.com"]}}}"#.write(
            toFile: store + "/config.json", atomically: true, encoding: .utf8)
        #expect(
            try replica(
                "import", "--account", "a", "-",
                input: mail("m2", to: "ada@example.com") + "\n" + mail("m3", to: "team@example.com")
            ).status == 0)
        let items =
            try JSON.parse(replica("get", "--account", "a", "--json", "m2", "m3").standardOutput)["items"]?.arrayValue
            ?? []
        let score = { (id: String) in
            items.first { $0["uniqueIdentifier"]?.stringValue == id }?["attributes"]?["isPriority"]?.boolValue
        }
        // A question to me is a priority (1.5 + 1.0); the same question to a team list is not (1.0).
        #expect(score("m2") == true)
        #expect(score("m3") == false)

        try #"{"enrichment": {"summarizer": "gpt"}}"#.write(
            toFile: store + "/config.json", atomically: true, encoding: .utf8)
        let refused = try replica("import", "--account", "a", "-", input: mail("m4", to: "ada@example.com"))
        #expect(refused.status != 0)
        #expect(refused.standardError.contains(#"'enrichment': 'summarizer' must be "builtin", "off", or a program"#))
    }
}
