import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// The stream of replies a host watches while the tool runs.
/// Runs on both backends (``TestBackend``).
@Suite struct RepliesTests {
    @Test(arguments: TestBackend.available)
    func repliesComeGroupedByQueryWithPartialThenComplete(_ backend: TestBackend) async throws {
        let fixture = try await ToolFixture(backend)
        let tool = fixture.tool()
        let replies = Recorder<SearchReply>()
        let watcher = Task { [stream = tool.replies] in for await reply in stream { replies.append(reply) } }
        defer { watcher.cancel() }

        let result = await tool.call(
            arguments: #"""
                {"queries": [
                    {"query": "launch", "label": "everything about the launch"},
                    {"query": "launch", "filters": {"types": ["communications"]}, "stages": [{"stage": "group", "by": "authorNames"}, {"stage": "count"}]}
                ]}
                """#)
        let structured = try StructuredResult(result)
        #expect(structured.queries.count == 2)
        #expect(structured.queries[0]["label"]?.stringValue == "everything about the launch")
        #expect(structured.queries[1]["count"]?.intValue == 2)

        #expect(await eventually { replies.all.count == 4 })
        let byQuery = Dictionary(grouping: replies.all, by: \.queryToken)
        #expect(byQuery.count == 2, "each query has its own token")
        let (first, second) = try #require(byQuery.values.sorted { $0.count < $1.count }.pairs)
        #expect(first.map(\.status) == [.complete])
        #expect(first[0].label == "everything about the launch")
        #expect(first[0].stageToken == first[0].queryToken + ".0")
        guard case .data(.items(let items)) = first[0].content else {
            Issue.record("the search reply holds items")
            return
        }
        #expect(items.count == 7)

        #expect(second.map(\.status) == [.partial, .partial, .complete])
        #expect(second.map(\.stageToken) == [0, 1, 2].map { second[0].queryToken + ".\($0)" })
        #expect(second.map(\.label) == ["search “launch”", "group by authorNames", "count"])
        #expect(
            second.map { reply -> PipelineDataType? in
                if case .data(let data) = reply.content { data.type } else { nil }
            }
                == [.items, .groupedItems, .count])

        // A second call gets new tokens; a host can tell its replies apart.
        _ = await tool.call(arguments: #"{"query": "budget"}"#)
        #expect(await eventually { replies.all.count == 5 })
        #expect(!byQuery.keys.contains(replies.all[4].queryToken))
    }

    @Test func aReplyIsWrittenAsOneJSONLine() async throws {
        let reply = SearchReply(
            queryToken: "q1", stageToken: "q1.2", label: "count", content: .data(.count(3)), status: .complete)
        #expect(
            reply.json.serialized()
                == #"{"queryToken":"q1","stageToken":"q1.2","label":"count","status":"complete","content":{"type":"count","count":3}}"#
        )
        let error = SearchReply(
            queryToken: "q2", stageToken: "q2.0", label: "error", content: .error("'limit' must be …"),
            status: .complete)
        #expect(
            error.json.serialized()
                == #"{"queryToken":"q2","stageToken":"q2.0","label":"error","status":"complete","content":{"type":"error","message":"'limit' must be …"}}"#
        )
    }
}

extension Array {
    /// The two elements of a two-element array.
    fileprivate var pairs: (Element, Element)? { count == 2 ? (self[0], self[1]) : nil }
}
